import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import semver from 'semver';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createApi } from '../server/app.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { Manifest } from '../server/tree/format.ts';
import { openTree, type Tree } from '../server/tree/open.ts';
import type { CatalogVersion } from '../server/versions/schema.ts';
import {
  findProgram,
  liveContext,
  makeWorkspace,
  rawRequest,
  serveBuiltTree,
  type ServedTree,
  type NginxServer,
  type Workspace,
} from './helpers.ts';

// Issue 31: the answers existing updater libraries read. The plain-text latest parsed as
// SpigotUpdateChecker's CUSTOM_URL source reads it (first line, trimmed) and as libraries that
// compare the body as it is; the Modrinth-shaped lookup parsed as Modrinth clients read
// `version_files/update` (keyed by hash, the primary file's url and hashes). Against the origin
// and nginx serving the built tree in front of it (on loopback), both from one build.

const NGINX = findProgram('nginx');
if (!NGINX) console.warn('updaters.test.ts: nginx not installed, the nginx half not run (apt-get install -y nginx)');

const LOOKUP = '/api/plugin-versions/by-hash/update';
/** Modrinth's loader tags as its clients send them, for each software (LeafMC and CanvasMC have none: ours). */
const LOADER: Record<string, string> = {
  PaperMC: 'paper',
  Spigot: 'spigot',
  Bukkit: 'bukkit',
  Purpur: 'purpur',
  Quilt: 'quilt',
  LeafMC: 'leafmc',
  Folia: 'folia',
  CanvasMC: 'canvasmc',
  BungeeCord: 'bungeecord',
  Waterfall: 'waterfall',
  Velocity: 'velocity',
};
const ctx = {} as {
  served: ServedTree;
  workspace: Workspace;
  origin: RunningOrigin;
  nginx: NginxServer | undefined;
  tree: Tree;
  manifest: Manifest;
  treeDir: string;
  ready: Promise<void> | undefined;
};

const setup = () => (ctx.ready ??= start());
async function start() {
  ctx.workspace = await makeWorkspace({ build: false });
  ctx.served = await serveBuiltTree(ctx.workspace);
  ({ origin: ctx.origin, nginx: ctx.nginx, treeDir: ctx.treeDir, manifest: ctx.manifest } = ctx.served);
  ctx.tree = await openTree(ctx.treeDir);
}
async function teardown() {
  await ctx.served?.stop();
  await ctx.workspace?.remove();
}

function targets(): [string, string][] {
  return [['origin', ctx.origin.url], ...(ctx.nginx ? [['nginx', ctx.nginx.url] as [string, string]] : [])];
}

/** SpigotUpdateChecker's CUSTOM_URL source: `reader.readLine().trim()`. */
const firstLineTrimmed = (body: string) => body.split(/\r?\n/)[0]!.trim();

const text = suite('GET /api/plugin-versions/latest/<software>[/<java>].txt');
text.before(setup);

text('every precomputed .txt answer is the version of the JSON latest, alone, as the tree holds it', async () => {
  const routes = Object.entries(ctx.manifest.routes).filter(
    ([path]) => /\.txt(\?|$)/.test(path) && path.includes('/latest/'),
  );
  // 11 softwares x 6 Java forms (any, 8, 11, 17, 21, 25) x 4 channel forms.
  assert.is(routes.length, 264);
  let found = 0;
  for (const [path, entry] of routes) {
    const file = await readFile(join(ctx.treeDir, entry.file));
    const jsonPath = path.replace('.txt', '');
    for (const [name, url] of targets()) {
      const answer = await rawRequest(url + path);
      assert.is(answer.status, entry.status, `${name} ${path}`);
      assert.equal(answer.body, file, `${name} ${path}: the tree's bytes`);
      assert.is(answer.headers.etag, entry.headers.etag, `${name} ${path}: ETag`);
      const json = JSON.parse((await rawRequest(url + jsonPath)).body.toString());
      if (entry.status !== 200) {
        assert.is(answer.headers['content-type'], 'application/json; charset=utf-8', `${name} ${path}: a JSON error`);
        assert.equal(JSON.parse(answer.body.toString()), json, `${name} ${path}: the JSON latest's 404`);
        continue;
      }
      found++;
      assert.is(answer.headers['content-type'], 'text/plain; charset=utf-8', `${name} ${path}`);
      assert.is(answer.headers['cache-control'], 'public, max-age=60', `${name} ${path}`);
      const body = answer.body.toString();
      assert.not.ok(/\s/.test(body), `${name} ${path}: no newline or space: ${JSON.stringify(body)}`);
      assert.is(body, json.version.pluginVersion, `${name} ${path}: compared as it is`);
      assert.is(firstLineTrimmed(body), json.version.pluginVersion, `${name} ${path}: first line trimmed`);
      assert.is(semver.valid(body), body, `${name} ${path}: a semantic version`);
    }
  }
  assert.ok(found > 20, `${found} versions read`);
});

text('other letter cases are answered live with the same bytes and ETag; If-None-Match gives 304', async () => {
  const stored = await rawRequest(`${ctx.origin.url}/api/plugin-versions/latest/papermc/21.txt?channel=beta`);
  assert.is(stored.status, 200);
  for (const [name, url] of targets()) {
    const live = await rawRequest(`${url}/api/plugin-versions/latest/PaperMC/21.txt?channel=beta`);
    assert.is(live.status, 200, name);
    assert.equal(live.body, stored.body, name);
    assert.is(live.headers.etag, stored.headers.etag, name);
    const again = await rawRequest(`${url}/api/plugin-versions/latest/papermc/21.txt?channel=beta`, {
      headers: { 'if-none-match': stored.headers.etag as string },
    });
    assert.is(again.status, 304, name);
  }
});

text('the grammar: .txt is never a software name or a Java version; errors are JSON naming what is wrong', async () => {
  for (const [name, url] of targets()) {
    const channel = await rawRequest(`${url}/api/plugin-versions/latest/papermc.txt?channel=nightly`);
    assert.is(channel.status, 400, name);
    assert.match(JSON.parse(channel.body.toString()).error, /^channel must be one of release, beta, alpha/);
    const software = await rawRequest(`${url}/api/plugin-versions/latest/forge.txt`);
    assert.is(software.status, 404, name);
    assert.match(JSON.parse(software.body.toString()).error, /^Unknown server software "forge"/);
    const java = await rawRequest(`${url}/api/plugin-versions/latest/papermc/9.txt`);
    assert.is(java.status, 404, name);
    assert.match(JSON.parse(java.body.toString()).error, /^Unknown Java version "9"/);
  }
});

text.run();

type ModrinthFile = { url: string; filename: string; primary: boolean; size: number; hashes: Record<string, string> };
type ModrinthVersion = {
  id: string;
  version_number: string;
  version_type: string;
  loaders: string[];
  game_versions: string[];
  date_published: string;
  files: ModrinthFile[];
};

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url + LOOKUP, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
const digest = (algorithm: string, bytes: Uint8Array) => createHash(algorithm).update(bytes).digest('hex');

/** As a Modrinth client reads a version: its primary file, else the first. */
const primaryFile = (version: ModrinthVersion) => version.files.find((file) => file.primary) ?? version.files[0]!;

/** What resolve answers for the server a lookup describes: the oracle of the Modrinth-shaped answer. */
async function resolved(software: string, version: CatalogVersion, minecraft: string | undefined) {
  const query = new URLSearchParams({ channel: version.channel ?? 'release' });
  if (minecraft) query.set('minecraft', minecraft);
  const answer = await rawRequest(
    `${ctx.origin.url}/api/plugin-versions/resolve/${software.toLowerCase()}/${version.javaVersion}?${query}`,
  );
  return answer.status === 200 ? (JSON.parse(answer.body.toString()).version as { id: string }) : undefined;
}

const modrinth = suite('POST /api/plugin-versions/by-hash/update (Modrinth version_files/update)');
modrinth.before(setup);

modrinth(
  'each JAR of the depot, by its sha512, gets the build resolve gives its server; the file downloads and matches',
  async () => {
    let offered = 0;
    for (const version of ctx.tree.catalog.versions) {
      const software = version.serverSoftware[0]!;
      const minecraft = version.minecraftVersion;
      const body = {
        hashes: [version.sha512.toUpperCase()],
        algorithm: 'sha512',
        loaders: [LOADER[software]!.toUpperCase()],
        ...(minecraft ? { game_versions: [minecraft] } : {}),
      };
      const expected = await resolved(software, version, minecraft);
      for (const [name, url] of targets()) {
        const response = await post(url, JSON.stringify(body));
        assert.is(response.status, 200, `${name} ${version.id}`);
        assert.is(response.headers.get('access-control-allow-origin'), '*', `${name}: CORS`);
        assert.ok(response.headers.get('ratelimit'), `${name}: rate limited`);
        const answer = (await response.json()) as Record<string, ModrinthVersion>;
        const key = body.hashes[0]!;
        if (!expected) {
          assert.equal(answer, {}, `${name} ${version.id}: no build, left out`);
          continue;
        }
        assert.equal(Object.keys(answer), [key], `${name} ${version.id}: keyed by the hash as sent`);
        const update = answer[key]!;
        assert.is(update.id, expected.id, `${name} ${version.id}: resolve's build`);
        const record = ctx.tree.catalog.byId.get(update.id)!;
        assert.is(update.version_number, record.pluginVersion);
        assert.is(update.version_type, record.channel ?? 'release');
        assert.is(update.date_published, record.createdAt);
        assert.ok(semver.valid(update.version_number));
        if (minecraft) assert.ok(update.game_versions.length > 0);
        const file = primaryFile(update);
        assert.is(file.filename, record.fileName);
        const jar = await rawRequest(file.url);
        assert.is(jar.status, 200, file.url);
        assert.is(digest('sha512', jar.body), file.hashes.sha512, `${file.url}: sha512`);
        assert.is(digest('sha256', jar.body), file.hashes.sha256, `${file.url}: sha256`);
        assert.is(jar.body.length, file.size);
        offered++;
      }
    }
    assert.ok(offered > 5, `${offered} updates offered`);
  },
);

modrinth('a Purpur server running a Paper JAR is offered what resolve gives Purpur; sha256 is taken too', async () => {
  const paper = ctx.tree.catalog.versions.find((v) => v.serverSoftware.includes('PaperMC') && !v.withdrawn)!;
  const expected = await resolved('Purpur', paper, undefined);
  assert.ok(expected, 'a build for Purpur');
  const body = JSON.stringify({ hashes: [paper.sha256], algorithm: 'sha256', loaders: ['purpur'], game_versions: [] });
  const answer = (await (await post(ctx.origin.url, body)).json()) as Record<string, ModrinthVersion>;
  assert.is(answer[paper.sha256]?.id, expected!.id);
});

modrinth('unknown hashes and builds for no asked Minecraft version are left out', async () => {
  const known = ctx.tree.catalog.versions.find((v) => v.minecraftVersion)!;
  const unknown = randomBytes(64).toString('hex');
  const body = { hashes: [unknown, known.sha512], algorithm: 'sha512', loaders: [], game_versions: ['1.2.5'] };
  for (const [name, url] of targets()) {
    const response = await post(url, JSON.stringify(body));
    assert.is(response.status, 200, name);
    assert.equal(await response.json(), {}, name);
  }
});

modrinth('bad bodies are 400s naming the field; a body over 256 KiB is 413', async () => {
  const hash = ctx.tree.catalog.versions[0]!.sha512;
  const cases: [string, string, RegExp][] = [
    ['not JSON', '{hashes:', /^body must be JSON/],
    ['not an object', '[]', /^body: /],
    [
      'too many hashes',
      JSON.stringify({ hashes: Array(1001).fill(hash), algorithm: 'sha512' }),
      /^hashes: must hold at most 1000/,
    ],
    [
      'sha1',
      JSON.stringify({ hashes: [hash.slice(0, 40)], algorithm: 'sha1' }),
      /^algorithm: must be one of sha256, sha512/,
    ],
    [
      'unknown loader',
      JSON.stringify({ hashes: [hash], algorithm: 'sha512', loaders: ['forge'] }),
      /^loaders\[0\]: must be one of paper, /,
    ],
    ['short hash', JSON.stringify({ hashes: ['abc'], algorithm: 'sha512' }), /^hashes\[0\]: must be 128 hex digits/],
    [
      'snapshot',
      JSON.stringify({ hashes: [hash], algorithm: 'sha512', game_versions: ['24w14a'] }),
      /^game_versions\[0\]: /,
    ],
    [
      'channel',
      JSON.stringify({ hashes: [hash], algorithm: 'sha512', version_types: ['nightly'] }),
      /^version_types\[0\]: /,
    ],
  ];
  for (const [name, url] of targets()) {
    for (const [what, body, message] of cases) {
      const response = await post(url, body);
      assert.is(response.status, 400, `${name} ${what}`);
      assert.is(response.headers.get('access-control-allow-origin'), '*', `${name} ${what}: CORS`);
      assert.match(((await response.json()) as { error: string }).error, message, `${name} ${what}`);
    }
    const large = await post(url, JSON.stringify({ hashes: Array(3000).fill(hash), algorithm: 'sha512' }));
    assert.is(large.status, 413, `${name}: large`);
    // What a page may send to any site without a preflight: a text/plain POST, or a form's type.
    for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', undefined]) {
      const body = JSON.stringify({ hashes: [hash], algorithm: 'sha512' });
      const simple = await fetch(url + LOOKUP, { method: 'POST', body, headers: type ? { 'content-type': type } : {} });
      assert.is(simple.status, 415, `${name} ${type}`);
      assert.is(simple.headers.get('access-control-allow-origin'), '*', `${name} ${type}: CORS`);
      assert.match(
        ((await simple.json()) as { error: string }).error,
        /^Send the lookup as JSON \(Content-Type: application\/json\)/,
      );
    }
  }
});

modrinth('the preflight of a page allows POST with Content-Type; GET is 405 naming POST', async () => {
  for (const [name, url] of targets()) {
    const preflight = await fetch(url + LOOKUP, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'POST' },
    });
    assert.is(preflight.status, 204, name);
    assert.is(preflight.headers.get('access-control-allow-origin'), '*');
    assert.is(preflight.headers.get('access-control-allow-methods'), 'POST');
    assert.is(preflight.headers.get('access-control-allow-headers'), 'Content-Type');
    const get = await fetch(url + LOOKUP);
    assert.is(get.status, 405, name);
    assert.is(get.headers.get('allow'), 'POST, OPTIONS');
  }
});

modrinth('property: no body, however odd, gets a 500', async () => {
  const api = createApi(liveContext(ctx.tree));
  const hashes = ctx.tree.catalog.versions.flatMap((v) => [v.sha256, v.sha512]);
  const field = fc.oneof(
    fc.anything(),
    fc.array(fc.oneof(fc.constantFrom(...hashes), fc.stringMatching(/^[0-9a-f]{0,130}$/), fc.string()), {
      maxLength: 5,
    }),
    fc.array(fc.oneof(fc.constantFrom('paper', 'PURPUR', 'velocity', 'forge'), fc.string()), { maxLength: 4 }),
    fc.array(fc.oneof(fc.constantFrom('1.21.4', '1.20', '1.8.8', '1.21.x'), fc.string()), { maxLength: 4 }),
  );
  const body = fc.oneof(
    fc
      .record(
        {
          hashes: field,
          algorithm: fc.oneof(fc.constantFrom('sha256', 'sha512', 'sha1', 'SHA512'), fc.anything()),
          loaders: field,
          game_versions: field,
          version_types: fc.oneof(fc.constantFrom(['beta'], ['alpha', 'release'], []), fc.anything()),
        },
        { requiredKeys: [] },
      )
      .map((value) => JSON.stringify(value)),
    fc.json(),
    fc.string(),
  );
  await fc.assert(
    fc.asyncProperty(body, async (text) => {
      const response = await api.request(LOOKUP, {
        method: 'POST',
        body: text,
        headers: { 'content-type': 'application/json' },
      });
      assert.ok([200, 400].includes(response.status), `${response.status} for ${text}`);
      const answer = (await response.json()) as Record<string, unknown>;
      if (response.status === 400) assert.type(answer.error, 'string');
    }),
    { numRuns: 300 },
  );
});

modrinth.after(teardown);
modrinth.run();
