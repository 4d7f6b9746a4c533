import { createHash } from 'node:crypto';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createApi } from '../server/app.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { currentTreeDir, openTree, type Tree } from '../server/tree/open.ts';
import { createCatalog } from '../server/versions/catalog.ts';
import { resolveBuild } from '../server/versions/resolve.ts';
import { PluginVersionRecord } from '../server/versions/schema.ts';
import { catalogVersion } from '../server/versions/catalog-version.ts';
import { SERVER_SOFTWARE, type ServerSoftware } from '../server/versions/software.ts';
import { type JavaVersion } from '../server/versions/java.ts';
import { buildApi, liveContext, makeWorkspace, pluginJar, startTestOrigin, type Workspace } from './helpers.ts';

/**
 * Issue 31: data made here, one build per edge of the compatibility table. Letter: [softwares,
 * plugin version, Java, Minecraft ranges, foliaSupported]; created in the order listed (oldest first).
 */
const EDGES = {
  W: [['Waterfall'], '1.0.0', '17', undefined, false], // Waterfall: end of life
  P1: [['PaperMC'], '1.0.0', '17', '1.20.4', false], // Paper-only, 1.20.4
  FS: [['Spigot'], '1.7.0', '17', '1.20.4', true], // a Spigot build marked folia-supported
  U: [['Purpur'], '1.5.0', '17', '1.20.4-1.21.5', false], // Purpur-only
  F: [['Folia'], '1.6.0', '17', '1.21.5-1.21.6', false], // Folia-only
  P2: [['PaperMC'], '2.0.0', '21', '1.21.x', false], // Paper-only, every 1.21, Java 21
  S5: [['Spigot'], '3.0.0', '17', '1.21.5', false], // Spigot for 1.21.5: past Paper's hard fork
  V: [['Velocity'], '4.0.0', '21', undefined, false],
} as const;
type Letter = keyof typeof EDGES;

function edgeRecord(letter: Letter, index: number, bytes: Uint8Array): PluginVersionRecord {
  const [serverSoftware, pluginVersion, javaVersion, minecraft, foliaSupported] = EDGES[letter];
  const at = new Date(Date.UTC(2026, 0, 1 + index)).toISOString();
  const ranges = minecraft?.split(',').map((item) => {
    const [from = '', to = from] = item.split('-');
    return from.endsWith('.x') ? { from: from.slice(0, -2), to: from } : { from, to };
  });
  return PluginVersionRecord.parse({
    ...{ id: `plugin-${1767225600000 + index}-${letter.toLowerCase()}`, serverSoftware: [...serverSoftware] },
    ...{ pluginVersion, javaVersion, fileName: `Edge-${letter}.jar`, fileSize: bytes.length },
    ...(ranges && { minecraftVersion: ranges.at(-1)!.to, minecraftVersions: ranges }),
    ...(foliaSupported && { foliaSupported: true }),
    ...{ sha256: createHash('sha256').update(bytes).digest('hex'), createdAt: at, updatedAt: at, createdBy: 'test' },
  });
}

/** Columns: Java 17 then 21, each without `?minecraft=` and with 1.20.4, 1.21.5, 1.21.6. */
const COLUMNS = (['17', '21'] as const).flatMap((java) =>
  [undefined, '1.20.4', '1.21.5', '1.21.6'].map((minecraft) => ({ java, minecraft })),
);
/** `letter` (the server's own software), `letter/Software` (what matched), `!` for unverified, `-` for nothing. */
const TABLE: Record<ServerSoftware, string> = {
  PaperMC: 'P1 P1 S5/Spigot! F/Folia | P2 P1 P2 P2', // Spigot past the fork before Folia, Folia last
  Spigot: 'S5 FS S5 - | S5 FS S5 -',
  Bukkit: '- - - - | - - - -',
  Purpur: 'U U U F/Folia | U U U P2/PaperMC', // only Paper builds fit: Paper's
  Quilt: '- - - - | - - - -',
  LeafMC: 'P1/PaperMC P1/PaperMC U/Purpur F/Folia | P2/PaperMC P1/PaperMC P2/PaperMC P2/PaperMC', // Leaf runs Purpur's
  Folia: 'F FS/Spigot F F | F FS/Spigot F F', // foliaSupported after Folia's own
  CanvasMC: 'F/Folia FS/Spigot F/Folia F/Folia | F/Folia FS/Spigot F/Folia F/Folia',
  BungeeCord: '- - - - | - - - -',
  Waterfall: 'W W W W | W W W W',
  Velocity: '- - - - | V V V V',
};
const cells = (software: ServerSoftware) =>
  TABLE[software]
    .replace(' | ', ' ')
    .split(' ')
    .map((cell, i) => ({ ...COLUMNS[i]!, cell }));

const ctx = {} as {
  workspace: Workspace;
  origin: RunningOrigin;
  tree: Tree;
  records: Map<Letter, PluginVersionRecord>;
};
const get = async (path: string) => {
  const response = await fetch(ctx.origin.url + path);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};
const query = (minecraft: string | undefined) => (minecraft ? `?minecraft=${minecraft}` : '');
const idOf = (letter: string) => ctx.records.get(letter as Letter)!.id;

const edges = suite(
  'issue 31: resolve and update check over every software x Java x Minecraft, on data with each edge',
);
edges.before(async () => {
  ctx.workspace = await makeWorkspace({ build: false });
  const { dataDir } = ctx.workspace;
  for (const dir of ['versions', 'jars'])
    for (const name of await readdir(join(dataDir, dir))) await rm(join(dataDir, dir, name));
  ctx.records = new Map();
  for (const [index, letter] of (Object.keys(EDGES) as Letter[]).entries()) {
    const bytes = pluginJar(`edge-${letter}`);
    const record = edgeRecord(letter, index, bytes);
    ctx.records.set(letter, record);
    await writeFile(join(dataDir, 'jars', `${record.id}.jar`), bytes);
    await writeFile(join(dataDir, 'versions', `${record.id}.json`), JSON.stringify(record));
  }
  await buildApi(ctx.workspace);
  ctx.origin = await startTestOrigin(ctx.workspace);
  ctx.tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
});
edges.after(async () => {
  await ctx.origin?.close();
  await ctx.workspace?.remove();
});

for (const software of SERVER_SOFTWARE) {
  edges(`${software}: ${TABLE[software]}`, async () => {
    for (const { java, minecraft, cell } of cells(software)) {
      const where = `${software} Java ${java} ${minecraft ?? 'any'}`;
      const name = software.toLowerCase();
      const resolved = await get(`/api/plugin-versions/resolve/${name}/${java}${query(minecraft)}`);
      const check = await get(`/api/plugin-versions/update-check/${name}/${java}/0.1.0${query(minecraft)}`);
      if (cell === '-') {
        assert.is(resolved.status, 404, where);
        assert.is(check.status, 404, where);
        assert.is(check.body.error, resolved.body.error, where);
        continue;
      }
      const [letter, from = software] = cell.replace('!', '').split('/');
      assert.is(resolved.status, 200, where);
      assert.is(resolved.body.version.id, idOf(letter!), where);
      assert.equal(resolved.body.resolvedFrom, { software: from, java: EDGES[letter as Letter][2] }, where);
      assert.is(resolved.body.compatibility, cell.endsWith('!') ? 'unverified' : undefined, where);
      // The update check offers what resolve offers, saying the same.
      assert.is(check.status, 200, where);
      assert.equal(check.body.latest, resolved.body.version, where);
      for (const key of ['resolvedFrom', 'compatibility', 'endOfLife'])
        assert.equal(check.body[key], resolved.body[key], `${where}: ${key}`);
      assert.is(check.body.status, 'outdated', where);
    }
  });
}

edges('Java 8 and 11 servers get nothing (every build needs Java 17): 404 naming Java 17', async () => {
  for (const java of ['8', '11'] as JavaVersion[]) {
    const check = await get(`/api/plugin-versions/update-check/papermc/${java}/1.0.0`);
    assert.is(check.status, 404);
    assert.match(check.body.error, /^No build for PaperMC on Java (8|11); available for Java 17: 1\.0\.0/);
  }
});

edges(
  'without ?minecraft=, a Spigot build whose highest version is after 1.21.4 ranks after an older verified one',
  () => {
    const versions = ['S5', 'FS'].map((letter) => catalogVersion(ctx.records.get(letter as Letter)!, '0'.repeat(128)));
    const catalog = createCatalog(versions, []);
    const found = resolveBuild(catalog.versions, { software: 'PaperMC', java: '21', channel: 'release' });
    assert.is(found?.version.id, idOf('FS'));
    assert.is(found?.unverified, false);
    const spigotOnly = createCatalog([versions[0]!], []);
    const past = resolveBuild(spigotOnly.versions, { software: 'Purpur', java: '21', channel: 'release' });
    assert.is(past?.version.id, idOf('S5'));
    assert.is(past?.unverified, true);
    // Spigot itself was never forked: its own builds are plain.
    assert.is(resolveBuild(spigotOnly.versions, { software: 'Spigot', channel: 'release' })?.unverified, false);
  },
);

edges('Waterfall: its resolve answers and update checks say it is end of life, with a link to Velocity', async () => {
  const endOfLife = { since: '2024-03', successor: 'Velocity', url: 'https://papermc.io/software/velocity' };
  for (const path of ['/api/plugin-versions/resolve/waterfall', '/api/plugin-versions/update-check/waterfall/17/1.0.0'])
    assert.equal((await get(path)).body.endOfLife, endOfLife, path);
  assert.is((await get('/api/plugin-versions/resolve/velocity')).body.endOfLife, undefined);
});

edges('a Purpur server with only Paper builds for its version gets its update', async () => {
  const check = await get('/api/plugin-versions/update-check/purpur/21/1.0.0?minecraft=1.21.6');
  assert.is(check.status, 200);
  assert.is(check.body.latest.pluginVersion, '2.0.0');
  assert.equal(check.body.resolvedFrom, { software: 'PaperMC', java: '21' });
  assert.is(check.body.behind, 2); // 2.0.0, and Folia's 1.6.0 (the last fallback)
});

edges('a 1.20.4 server is never offered a 1.21-only build, and is told why', async () => {
  const check = await get('/api/plugin-versions/update-check/papermc/21/1.0.0?minecraft=1.20.4');
  assert.is(check.body.status, 'latest');
  assert.is(check.body.latest.pluginVersion, '1.0.0');
  // Velocity's 4.0.0 is not named: a proxy's build is never a game server's reason to switch software.
  assert.equal(check.body.newerElsewhere, [
    { version: '3.0.0', needs: { minecraft: '1.21.5', software: ['Spigot'] } },
    { version: '2.0.0', needs: { minecraft: '1.21.x' } },
    { version: '1.7.0', needs: { software: ['Spigot'] } },
    { version: '1.6.0', needs: { minecraft: '1.21.5-1.21.6', software: ['Folia'] } },
    { version: '1.5.0', needs: { software: ['Purpur'] } },
  ]);
});

edges('a Java 17 server is told a newer build needs Java 21; Java is a minimum', async () => {
  const check = await get('/api/plugin-versions/update-check/velocity/17/4.0.0');
  assert.is(check.status, 404); // Velocity's only build needs Java 21
  const paper = await get('/api/plugin-versions/update-check/papermc/17/1.0.0');
  assert.is(paper.body.status, 'latest');
  assert.equal(paper.body.newerElsewhere.slice(0, 2), [
    { version: '3.0.0', needs: { software: ['Spigot'] } }, // past the fork: ranked after P1
    { version: '2.0.0', needs: { java: '21' } },
  ]);
  const on21 = await get('/api/plugin-versions/update-check/spigot/21/1.7.0');
  assert.is(on21.body.latest.pluginVersion, '3.0.0'); // a Java 17 build, offered to Java 21
  assert.is(on21.body.status, 'outdated');
  assert.not.ok('newerElsewhere' in on21.body, "Velocity's 4.0.0 is a proxy's build, never named to a game server");
});

edges('newerElsewhere is absent when nothing newer is held back', async () => {
  const check = await get('/api/plugin-versions/update-check/velocity/21/4.0.0');
  assert.is(check.body.status, 'latest');
  assert.not.ok('newerElsewhere' in check.body);
});

edges(
  "newerElsewhere names builds of the same kind alone: a proxy never a game server's, nor the reverse",
  async () => {
    const proxy = await get('/api/plugin-versions/update-check/waterfall/21/1.0.0');
    const server = await get('/api/plugin-versions/update-check/spigot/21/1.0.0');
    const named = (body: { newerElsewhere?: { needs: { software?: string[] } }[] }) =>
      (body.newerElsewhere ?? []).flatMap((newer) => newer.needs.software ?? []);
    assert.equal(
      named(proxy.body).filter((software) => !['BungeeCord', 'Waterfall', 'Velocity'].includes(software)),
      [],
    );
    assert.equal(
      named(server.body).filter((software) => ['BungeeCord', 'Waterfall', 'Velocity'].includes(software)),
      [],
    );
    assert.ok(named(proxy.body).includes('Velocity'), "a Waterfall proxy is told of Velocity's newer build");
  },
);

edges('every precomputed resolve and update-check answer equals the live one', async () => {
  const live = createApi(liveContext(ctx.tree));
  let checked = 0;
  for (const path of ctx.tree.routes.paths()) {
    if (!/^\/api\/plugin-versions\/(resolve|update-check)\//.test(path)) continue;
    const entry = ctx.tree.routes.get(path)!;
    const rendered = await live.request(path, { headers: { 'accept-encoding': 'identity' } });
    assert.is(rendered.status, entry.status, path);
    const bytes = Buffer.from(await rendered.arrayBuffer());
    assert.ok(bytes.equals(await readFile(join(ctx.tree.dir, entry.file))), `${path}: precomputed == live`);
    checked++;
  }
  assert.ok(checked > 100, `${checked} answers checked`);
});
edges.run();
