import { createHash } from 'node:crypto';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FormData, fetch as fetchUnchecked } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createApi } from '../server/app.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { currentTreeDir, openTree, type Tree } from '../server/tree/open.ts';
import { PluginVersionRecord } from '../server/versions/schema.ts';
import { checkAnswer } from './openapi-conformance.ts';
import {
  buildApi,
  liveContext,
  makeWorkspace,
  pluginJar,
  runDepot,
  startTestOrigin,
  type OriginProcess,
  type Workspace,
  startPublishing,
  stopPublishing,
} from './helpers.ts';

/**
 * Issue 39, items 3 and 4 on a real origin: Minecraft 26.x builds (one released through the CLI
 * as an operator types it, `--minecraft 1.21.10-26.1.x --java 25`), a beta for a 26.x snapshot,
 * and the Java each Minecraft version guarantees. Records made here, oldest first:
 */
const RECORDS = {
  A: { software: ['PaperMC'], version: '1.0.0', java: '21', minecraft: '1.20.5-1.21.10' },
  SP: { software: ['Spigot'], version: '0.9.0', java: '25', minecraft: '26.2' }, // past Paper's hard fork
  S: { software: ['PaperMC'], version: '2.1.0-beta.1', java: '25', minecraft: '26.2-snapshot-1', channel: 'beta' },
} as const;
type Letter = keyof typeof RECORDS | 'B';

function makeRecord(letter: keyof typeof RECORDS, index: number, bytes: Uint8Array): PluginVersionRecord {
  const { software, version, java, minecraft, ...rest } = RECORDS[letter];
  const at = new Date(Date.UTC(2026, 0, 1 + index)).toISOString();
  const [from = '', to = from] = /-(snapshot|pre|rc)-/.test(minecraft) ? [minecraft] : minecraft.split('-');
  return PluginVersionRecord.parse({
    ...{ id: `plugin-${1767225600000 + index}-${letter.toLowerCase()}`, serverSoftware: [...software] },
    ...{ pluginVersion: version, javaVersion: java, fileName: `Mc-${letter}.jar`, fileSize: bytes.length },
    ...(from === to ? { minecraftVersion: from } : { minecraftVersion: to, minecraftVersions: [{ from, to }] }),
    ...{ sha256: createHash('sha256').update(bytes).digest('hex'), createdAt: at, updatedAt: at, createdBy: 'test' },
    ...rest,
  });
}

const ctx = {} as {
  workspace: Workspace;
  origin: RunningOrigin;
  tree: Tree;
  ids: Map<Letter, string>;
  sha512: Map<Letter, string>;
  jars: Map<Letter, Uint8Array>;
};
const get = async (path: string) => {
  const response = await fetch(ctx.origin.url + path);
  await checkAnswer('GET', `http://127.0.0.1${path}`, response.clone());
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};
const idOf = (letter: Letter) => ctx.ids.get(letter)!;

const mc = suite('issue 39: Minecraft 26.x and the Java each Minecraft version guarantees, on a real origin');
mc.before(async () => {
  ctx.workspace = await makeWorkspace({ build: false });
  const { dataDir } = ctx.workspace;
  for (const dir of ['versions', 'jars'])
    for (const name of await readdir(join(dataDir, dir))) await rm(join(dataDir, dir, name));
  ctx.ids = new Map();
  ctx.jars = new Map();
  for (const [index, letter] of (Object.keys(RECORDS) as (keyof typeof RECORDS)[]).entries()) {
    const bytes = pluginJar(`mc-${letter}`, RECORDS[letter].software);
    const record = makeRecord(letter, index, bytes);
    ctx.ids.set(letter, record.id);
    ctx.jars.set(letter, bytes);
    await writeFile(join(dataDir, 'jars', `${record.id}.jar`), bytes);
    await writeFile(join(dataDir, 'versions', `${record.id}.json`), JSON.stringify(record));
  }
  await buildApi(ctx.workspace);
  // B: the release an operator types for a build that runs from 1.21.10 across the numbering change.
  const jar = join(ctx.workspace.dir, 'Plugin-2.0.0.jar');
  ctx.jars.set('B', pluginJar('2.0.0', ['PaperMC']));
  await writeFile(jar, ctx.jars.get('B')!);
  const args = ['release', jar, '--version', '2.0.0', '--java', '25', '--software', 'PaperMC'];
  const result = await runDepot([...args, '--minecraft', '1.21.10-26.1.x'], ctx.workspace);
  assert.is(result.code, 0, result.stderr);
  const released = JSON.parse(result.stdout) as { id: string; minecraftVersion: string; minecraftVersions: unknown };
  assert.is(released.minecraftVersion, '26.1.x');
  assert.equal(released.minecraftVersions, [{ from: '1.21.10', to: '26.1.x' }]);
  ctx.ids.set('B', released.id);
  ctx.origin = await startTestOrigin(ctx.workspace);
  ctx.tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  ctx.sha512 = new Map(
    [...ctx.ids].map(([letter, id]) => [letter, ctx.tree.catalog.byId.get(id)!.sha512] as [Letter, string]),
  );
});
mc.after(async () => {
  await ctx.origin?.close();
  await ctx.workspace?.remove();
});

/** Path -> the build offered (its letter), or a 404 whose message starts as given. */
const RESOLVE: [string, Letter | RegExp][] = [
  ['/api/plugin-versions/resolve/papermc', 'B'], // no Minecraft, no Java: the newest, as before
  ['/api/plugin-versions/resolve/papermc?minecraft=1.21.10', 'A'], // B is Java 25; a 1.21.10 server may run 21
  [
    '/api/plugin-versions/resolve/papermc?minecraft=1.21.11',
    /^No build for PaperMC for Minecraft 1\.21\.11; available for Java 25: 2\.0\.0$/,
  ],
  ['/api/plugin-versions/resolve/papermc/25?minecraft=1.21.11', 'B'], // the Java named wins
  ['/api/plugin-versions/resolve/papermc/21?minecraft=1.21.10', 'A'],
  ['/api/plugin-versions/resolve/papermc?minecraft=26.1', 'B'],
  ['/api/plugin-versions/resolve/papermc?minecraft=26.1.1', 'B'],
  ['/api/plugin-versions/resolve/purpur?minecraft=26.1.1', 'B'],
  ['/api/plugin-versions/resolve/papermc?minecraft=26.2', 'SP'], // a Spigot build past the hard fork
  // A snapshot: only a build naming it, and only in the channel asked.
  [
    '/api/plugin-versions/resolve/papermc?minecraft=26.2-snapshot-1',
    /^No build for PaperMC for Minecraft 26\.2-snapshot-1; available for Minecraft 1\.21\.10-26\.1\.x: 2\.0\.0; in the beta channel: 2\.1\.0-beta\.1$/,
  ],
  ['/api/plugin-versions/resolve/papermc?minecraft=26.2-snapshot-1&channel=beta', 'S'],
  ['/api/plugin-versions/resolve/papermc/25?minecraft=26.2-snapshot-1&channel=alpha', 'S'],
  [
    '/api/plugin-versions/resolve/papermc?minecraft=26.2-pre-1&channel=beta',
    /^No build for PaperMC for Minecraft 26\.2-pre-1 in the beta channel/,
  ],
  [
    '/api/plugin-versions/resolve/papermc?minecraft=26.1-rc-1&channel=alpha',
    /^No build for PaperMC for Minecraft 26\.1-rc-1 in the alpha channel/,
  ],
];
for (const [path, expected] of RESOLVE)
  mc(`${path}: ${expected instanceof RegExp ? '404' : expected}`, async () => {
    const answer = await get(path);
    if (expected instanceof RegExp) {
      assert.is(answer.status, 404, path);
      return assert.match(answer.body.error, expected, answer.body.error);
    }
    assert.is(answer.status, 200, path);
    assert.is(answer.body.version.id, idOf(expected), path);
    assert.is(answer.body.resolvedFrom.java, RECORDS[expected as keyof typeof RECORDS]?.java ?? '25');
    assert.is(answer.body.compatibility, expected === 'SP' ? 'unverified' : undefined, `${path}: compatibility`);
  });

mc('the download of resolve streams the JAR the Java guarantee allows', async () => {
  for (const [query, letter] of [
    ['?minecraft=1.21.10', 'A'],
    ['?minecraft=26.1.1', 'B'],
    ['?minecraft=26.2-snapshot-1&channel=beta', 'S'],
  ] as const) {
    const response = await fetch(`${ctx.origin.url}/api/plugin-versions/download/resolve/papermc${query}`);
    assert.is(response.status, 200, query);
    assert.ok(Buffer.from(await response.arrayBuffer()).equals(ctx.jars.get(letter)!), `${query}: ${letter}'s bytes`);
  }
  const refused = await fetch(`${ctx.origin.url}/api/plugin-versions/download/resolve/papermc?minecraft=1.21.11`);
  assert.is(refused.status, 404);
});

mc('the list filters by 26.x releases and pre-releases; a range of releases holds no snapshot', async () => {
  const ids = async (query: string) =>
    (await get(`/api/plugin-versions?minecraft=${query}`)).body.versions.map((v: { id: string }) => v.id);
  assert.equal(await ids('26.1.1'), [idOf('B')]);
  assert.equal(await ids('1.21.10'), [idOf('B'), idOf('A')]); // the list has no Java rule
  assert.equal(await ids('26.2'), [idOf('SP')]);
  assert.equal(await ids('26.2-snapshot-1'), [idOf('S')]);
  assert.equal(await ids('26.1-snapshot-1'), []);
  for (const bad of ['26.1.x', '26.2-snapshot', '1.21.5-pre-1']) {
    const answer = await get(`/api/plugin-versions?minecraft=${bad}`);
    assert.is(answer.status, 400, bad);
    assert.match(
      answer.body.error,
      /^minecraft must be a Minecraft version such as 1\.21\.4 or 1\.21, 26\.1\.1, or a 26\.x pre-release such as 26\.2-snapshot-1/,
    );
  }
});

mc(
  'update check: 26.x and snapshots by ?minecraft= and ?channel=; newerElsewhere names the Java a build needs',
  async () => {
    const on26 = await get('/api/plugin-versions/update-check/papermc/25/1.0.0?minecraft=26.1.1');
    assert.is(on26.status, 200);
    assert.equal([on26.body.status, on26.body.latest.id, on26.body.behind], ['outdated', idOf('B'), 1]);
    const snapshot = await get(
      '/api/plugin-versions/update-check/papermc/25/2.0.0?minecraft=26.2-snapshot-1&channel=beta',
    );
    assert.equal([snapshot.body.status, snapshot.body.latest.id, snapshot.body.behind], ['outdated', idOf('S'), 1]);
    const stayed = await get('/api/plugin-versions/update-check/papermc/21/1.0.0?minecraft=1.21.10');
    assert.equal([stayed.body.status, stayed.body.latest.id], ['latest', idOf('A')]);
    assert.equal(stayed.body.newerElsewhere, [{ version: '2.0.0', needs: { java: '25' } }]);
    const behind = await get('/api/plugin-versions/update-check/papermc/21/1.0.0?minecraft=26.1.1');
    assert.is(behind.status, 404);
    assert.match(
      behind.body.error,
      /^No build for PaperMC on Java 21 for Minecraft 26\.1\.1; available for Java 25: 2\.0\.0/,
    );
  },
);

mc('by-hash update: a server that moved to 26.1 from its Java 21 JAR is offered the Java 25 build', async () => {
  const lookup = async (letter: Letter, extra: Record<string, unknown>) => {
    const body = { hashes: [ctx.sha512.get(letter)], algorithm: 'sha512', loaders: ['paper'], ...extra };
    const response = await fetch(`${ctx.origin.url}/api/plugin-versions/by-hash/update`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    assert.is(response.status, 200);
    const answer = (await response.json()) as Record<string, { id: string; game_versions: string[] }>;
    return answer[ctx.sha512.get(letter)!];
  };
  assert.is((await lookup('A', { game_versions: ['26.1.1'] }))?.id, idOf('B'));
  assert.equal((await lookup('A', { game_versions: ['26.1.1'] }))?.game_versions, ['1.21.10', '26.1.x']);
  // Still on 1.21.10, or saying nothing of it: the JAR's Java 21, so not the Java 25 build.
  assert.is((await lookup('A', { game_versions: ['1.21.10'] }))?.id, idOf('A'));
  assert.is((await lookup('A', {}))?.id, idOf('A'));
  assert.is((await lookup('A', { game_versions: ['1.21.11'] }))?.id, undefined);
  assert.is((await lookup('B', { game_versions: ['26.2-snapshot-1'], version_types: ['beta'] }))?.id, idOf('S'));
  assert.is((await lookup('B', { game_versions: ['26.2-snapshot-1'] }))?.id, undefined);
});

mc(
  "the precomputed ?minecraft= answers name 26.x releases and snapshots, each equal to the origin's live answer",
  async () => {
    const api = createApi(liveContext(ctx.tree));
    const precomputed = [
      '/api/plugin-versions?minecraft=26.2-snapshot-1',
      '/api/plugin-versions/resolve/papermc?minecraft=26.2',
      '/api/plugin-versions/resolve/papermc?minecraft=1.21.10',
      '/api/plugin-versions/download/resolve/papermc?minecraft=26.2-snapshot-1',
    ];
    for (const path of precomputed) {
      const entry = ctx.tree.routes.get(path);
      assert.ok(entry, `${path} precomputed`);
      const live = await api.request(path, { headers: { 'accept-encoding': 'identity' } });
      assert.is(live.status, entry!.status, path);
      const bytes = Buffer.from(await live.arrayBuffer());
      assert.ok(bytes.equals(await readFile(join(ctx.tree.dir, entry!.file))), `${path}: bytes`);
    }
  },
);
mc.run();

const published = suite('issue 39: publishing over HTTP takes 26.x ranges and pre-releases as --minecraft does');
const pub = {} as { workspace: Workspace; origin: OriginProcess; token: string };
published.before(async () => {
  Object.assign(pub, await startPublishing());
});
published.after(() => stopPublishing(pub));

async function publishJar(version: string, minecraftVersions: string) {
  const body = new FormData();
  body.set('file', new Blob([Buffer.from(pluginJar(version, ['PaperMC']))]), `Published-${version}.jar`);
  const metadata = { pluginVersion: version, javaVersion: 25, serverSoftware: ['PaperMC'], minecraftVersions };
  body.set('metadata', JSON.stringify(metadata));
  // As publish-http.test.ts posts: its 400's `field` is not in the OpenAPI error schema (left to the publishing API).
  const response = await fetchUnchecked(`${pub.origin.url}/api/plugin-versions`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${pub.token}` },
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

published(
  'minecraftVersions "1.21.10-26.1.x, 26.2-rc-1": stored as ranges, served to 26.1.1 and the rc only',
  async () => {
    const { status, body } = await publishJar('9.0.0', '1.21.10-26.1.x, 26.2-rc-1');
    assert.is(status, 201, JSON.stringify(body));
    assert.is(body.version.minecraftVersion, '26.2-rc-1');
    assert.equal(body.version.minecraftVersions, [
      { from: '1.21.10', to: '26.1.x' },
      { from: '26.2-rc-1', to: '26.2-rc-1' },
    ]);
    const resolve = async (minecraft: string) => {
      const response = await fetch(`${pub.origin.url}/api/plugin-versions/resolve/papermc?minecraft=${minecraft}`);
      return response.status === 200 ? ((await response.json()) as { version: { id: string } }).version.id : undefined;
    };
    assert.is(await resolve('26.1.1'), body.version.id);
    assert.is(await resolve('26.2-rc-1'), body.version.id);
    assert.is.not(await resolve('26.2-pre-1'), body.version.id);
    assert.is.not(await resolve('1.21.11'), body.version.id); // a Java 25 build; 1.21.11 guarantees Java 21
  },
);

published('a pre-release as a range end is a 400 naming minecraftVersions, and nothing is released', async () => {
  const { status, body } = await publishJar('9.1.0', '26.1-26.2-snapshot-1');
  assert.is(status, 400);
  assert.is(body.field, 'minecraftVersions');
  assert.match(body.error, /^metadata\.minecraftVersions: "26\.1-26\.2-snapshot-1" is not a 26\.x pre-release alone/);
  const list = (await (await fetch(`${pub.origin.url}/api/plugin-versions`)).json()) as {
    versions: { pluginVersion: string }[];
  };
  assert.not.ok(list.versions.some((v) => v.pluginVersion === '9.1.0'));
});
published.run();
