import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningOrigin } from '../server/origin.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import { JAVA_VERSIONS } from '../server/versions/java.ts';
import { makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

type Context = {
  workspace: Workspace;
  origin: RunningOrigin;
  get: (path: string, init?: RequestInit) => Promise<Response>;
};
const ctx = {} as Context;

async function setup() {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await startTestOrigin(ctx.workspace);
  ctx.get = (path, init) => fetch(ctx.origin.url + path, init);
}
async function teardown() {
  await ctx.origin.close();
  await ctx.workspace.remove();
}

type ListedVersion = {
  id: string;
  serverSoftware: string[];
  javaVersion: string;
  pluginVersion: string;
  channel: 'release' | 'beta' | 'alpha';
  changelog?: string;
  fileName: string;
  fileSize: number;
  sha256: string;
  createdBy: string;
  createdByUser?: { id: string; username: string; image?: string; nickname?: string | null };
  isLatest: Record<string, boolean>;
  proxyVersion: string | null;
  minecraftVersion?: string;
  downloadUrl: string;
  createdAt: string;
  updatedAt: string;
};

async function listVersions(): Promise<ListedVersion[]> {
  return ((await (await ctx.get('/api/plugin-versions')).json()) as { versions: ListedVersion[] }).versions;
}

const list = suite('GET /api/plugin-versions');
list.before(setup);
list.after(teardown);

list('lists every version with the SPEC 2.1 fields, newest first', async () => {
  const response = await ctx.get('/api/plugin-versions');
  assert.is(response.status, 200);
  assert.match(response.headers.get('content-type')!, /^application\/json/);
  const body = (await response.json()) as { versions: ListedVersion[]; lastUpdated: string };
  assert.is(body.versions.length, 15);
  assert.is(body.lastUpdated, '2026-11-24T10:00:00.000Z');
  for (const v of body.versions) {
    assert.match(v.id, /^plugin-\d+-[A-Za-z0-9]+$/);
    for (const field of [
      'serverSoftware',
      'pluginVersion',
      'javaVersion',
      'fileName',
      'fileSize',
      'createdAt',
      'updatedAt',
      'createdBy',
      'isLatest',
    ]) {
      assert.ok(field in v, `${v.id} has ${field}`);
    }
    assert.ok(JAVA_VERSIONS.includes(v.javaVersion as never));
    assert.equal(Object.keys(v.isLatest).sort(), [...v.serverSoftware].sort());
    assert.is(v.downloadUrl, `/api/plugin-versions/download/${v.id}`);
  }
  const dates = body.versions.map((v) => v.createdAt);
  assert.equal(dates, [...dates].sort().reverse());
});

list('covers all 11 server softwares and all 5 Java versions, proxies with proxyVersion', async () => {
  const versions = await listVersions();
  assert.equal(new Set(versions.flatMap((v) => v.serverSoftware)).size, SERVER_SOFTWARE.length);
  assert.equal(new Set(versions.map((v) => v.javaVersion)).size, 5);
  const velocity = versions.filter((v) => v.serverSoftware.includes('Velocity'));
  assert.ok(velocity.length > 0 && velocity.every((v) => typeof v.proxyVersion === 'string'));
  assert.ok(versions.some((v) => ['PaperMC', 'Folia', 'Purpur'].every((s) => v.serverSoftware.includes(s))));
});

list('joins createdByUser when a profile exists, with and without image and nickname', async () => {
  const versions = await listVersions();
  const by = (name: string) => versions.find((v) => v.createdBy === name)!;
  assert.equal(by('alice').createdByUser, {
    id: 'user-alice',
    username: 'alice',
    image: 'https://avatars.example.org/alice.png',
    nickname: 'Alice the Maintainer',
  });
  assert.equal(by('bob').createdByUser, { id: 'user-bob', username: 'bob', nickname: null });
  assert.is(by('carol').createdByUser?.image, 'https://avatars.example.org/carol.png');
  assert.is(by('ci-bot').createdByUser, undefined);
});

list('answers JSON errors for unknown paths and keeps HEAD body-less', async () => {
  const missing = await ctx.get('/api/plugin-versions/nope/a/b/c');
  assert.is(missing.status, 404);
  assert.type(((await missing.json()) as { error: string }).error, 'string');
  const head = await ctx.get('/api/plugin-versions', { method: 'HEAD' });
  assert.is(head.status, 200);
  assert.is((await head.arrayBuffer()).byteLength, 0);
  assert.ok(Number(head.headers.get('content-length')) > 1000);
});
list.run();

const latest = suite('GET /api/plugin-versions/latest/:software[/:java]');
latest.before(setup);
latest.after(teardown);

const latestCases: [string, string, string][] = [
  // path, expected pluginVersion, expected javaVersion
  // The newest whatever its Java (SPEC 2.4.4): the demo's 2.0.0 for Minecraft 26.1 on Java 25 (issue 39).
  ['/api/plugin-versions/latest/papermc', '2.0.0', '25'],
  ['/api/plugin-versions/latest/papermc/25', '2.0.0', '25'],
  ['/api/plugin-versions/latest/PaperMC/21', '1.3.0', '21'],
  ['/api/plugin-versions/latest/PAPERMC/17', '1.4.0', '17'],
  ['/api/plugin-versions/latest/pApErMc/11', '1.1.0', '11'],
  ['/api/plugin-versions/latest/folia', '2.0.0', '25'],
  ['/api/plugin-versions/latest/Folia/21', '1.3.0', '21'],
  ['/api/plugin-versions/latest/Folia/17', '1.2.0', '17'],
  ['/api/plugin-versions/latest/spigot/8', '1.0.1', '8'],
  ['/api/plugin-versions/latest/velocity', '1.3.0', '21'],
  // The newer 1.5.0-beta.1 is a beta: only `?channel=beta` or `alpha` gets it (test/channels.test.ts).
  ['/api/plugin-versions/latest/leafmc', '1.3.0', '21'],
];
for (const [path, pluginVersion, javaVersion] of latestCases) {
  latest(`${path} -> ${pluginVersion} (Java ${javaVersion})`, async () => {
    const response = await ctx.get(path);
    assert.is(response.status, 200);
    const { version } = (await response.json()) as { version: ListedVersion };
    assert.is(version.pluginVersion, pluginVersion);
    assert.is(version.javaVersion, javaVersion);
    assert.is(version.createdByUser, undefined, 'SPEC 2.1: absent in the latest-version response');
    assert.is(response.headers.get('cache-control'), 'public, max-age=60');
  });
}

latest('isLatest: latest for one software but not another', async () => {
  const versions = await listVersions();
  const v120 = versions.find((v) => v.pluginVersion === '1.2.0' && v.serverSoftware.includes('Folia'))!;
  // 1.4.0 (PaperMC, Purpur, Java 17) is newer for those two; Folia on 17 has nothing newer.
  assert.equal(v120.isLatest, { PaperMC: false, Folia: true, Purpur: false });
  const v130 = versions.find((v) => v.pluginVersion === '1.3.0' && v.serverSoftware.includes('Folia'))!;
  // The newer 1.4.0 is Java 17: it does not displace 1.3.0 as latest for Java 21.
  assert.equal(v130.isLatest, { PaperMC: true, Folia: true, Purpur: true });
});

const notFoundCases: [string, RegExp][] = [
  ['/api/plugin-versions/latest/spigot/21', /^No plugin version found for Spigot/],
  ['/api/plugin-versions/download/latest/quilt/8', /^No plugin version found for Quilt/],
  [
    '/api/plugin-versions/latest/paper',
    /Unknown server software "paper"; expected one of PaperMC, Spigot, Bukkit, Purpur, Quilt, LeafMC, Folia, CanvasMC, BungeeCord, Waterfall, Velocity/,
  ],
  ['/api/plugin-versions/download/latest/forge', /Unknown server software "forge"/],
  ['/api/plugin-versions/latest/papermc/16', /Unknown Java version "16"; expected one of 8, 11, 17, 21/],
  ['/api/plugin-versions/download/latest/velocity/java21', /Unknown Java version/],
  ['/api/plugin-versions/download/plugin-1-unknown', /No plugin version with id "plugin-1-unknown"/],
  ['/api/plugin-versions/download/not-an-id', /No plugin version with id/],
];
for (const [path, message] of notFoundCases) {
  latest(`404 ${path}`, async () => {
    const response = await ctx.get(path);
    assert.is(response.status, 404);
    assert.match(response.headers.get('content-type')!, /^application\/json/);
    const body = (await response.json()) as { error: string };
    assert.match(body.error, message);
  });
}

latest('no version at all for a software: SPEC message without a Java version', async () => {
  // Every software has a version in the demo data; a Java version with none gives the message.
  const body = (await (await ctx.get('/api/plugin-versions/latest/canvasmc/8')).json()) as { error: string };
  assert.is(body.error, 'No plugin version found for CanvasMC on Java 8');
});
latest.run();

const download = suite('downloads');
download.before(setup);
download.after(teardown);

download('the 11 dedicated lowercase paths serve the latest JAR with SPEC 4.1 headers', async () => {
  const versions = await listVersions();
  for (const software of SERVER_SOFTWARE) {
    const response = await ctx.get(`/api/plugin-versions/download/latest/${software.toLowerCase()}`);
    assert.is(response.status, 200, software);
    const bytes = new Uint8Array(await response.arrayBuffer());
    // Newest first; only releases are latest without ?channel= (the demo's LeafMC beta is not).
    const expected = versions.find((v) => v.serverSoftware.includes(software) && v.channel === 'release')!;
    assert.is(response.headers.get('content-type'), 'application/java-archive');
    assert.is(response.headers.get('content-disposition'), `attachment; filename="${expected.fileName}"`);
    assert.is(Number(response.headers.get('content-length')), expected.fileSize);
    assert.is(bytes.length, expected.fileSize);
    assert.is(response.headers.get('etag'), `"${expected.sha256}"`);
    assert.is(response.headers.get('accept-ranges'), 'bytes');
    assert.ok('META-INF/MANIFEST.MF' in unzipSync(bytes), `${software}: a real JAR`);
  }
});

download('by software and Java version, in any letter case', async () => {
  const versions = await listVersions();
  const expected = versions.find((v) => v.serverSoftware.includes('BungeeCord') && v.javaVersion === '8')!;
  const response = await ctx.get('/api/plugin-versions/download/latest/BungeeCord/8');
  assert.is(response.status, 200);
  assert.is(response.headers.get('etag'), `"${expected.sha256}"`);
  const entries = unzipSync(new Uint8Array(await response.arrayBuffer()));
  assert.ok('bungee.yml' in entries);
});

download('by id: the exact JAR from data/, immutable', async () => {
  const versions = await listVersions();
  for (const v of versions) {
    const response = await ctx.get(v.downloadUrl);
    assert.is(response.status, 200);
    assert.is(response.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const served = Buffer.from(await response.arrayBuffer());
    const original = await readFile(join(ctx.workspace.dataDir, 'jars', `${v.id}.jar`));
    assert.ok(served.equals(original), v.id);
  }
});

download('If-None-Match answers 304 without a body; a stale tag gets the file', async () => {
  const path = '/api/plugin-versions/download/latest/papermc';
  const etag = (await ctx.get(path, { method: 'HEAD' })).headers.get('etag')!;
  const fresh = await ctx.get(path, { headers: { 'if-none-match': `"other", ${etag}` } });
  assert.is(fresh.status, 304);
  assert.is(fresh.headers.get('etag'), etag);
  assert.is((await fresh.arrayBuffer()).byteLength, 0);
  const stale = await ctx.get(path, { headers: { 'if-none-match': '"stale"' } });
  assert.is(stale.status, 200);
  const metadata = await ctx.get('/api/plugin-versions/latest/papermc');
  const again = await ctx.get('/api/plugin-versions/latest/papermc', {
    headers: { 'if-none-match': metadata.headers.get('etag')! },
  });
  assert.is(again.status, 304);
});

download('Range: 206 with Content-Range, suffix ranges, 416 outside, If-Range mismatch gives 200', async () => {
  const path = '/api/plugin-versions/download/latest/velocity';
  const full = Buffer.from(await (await ctx.get(path)).arrayBuffer());
  const first = await ctx.get(path, { headers: { range: 'bytes=0-9' } });
  assert.is(first.status, 206);
  assert.is(first.headers.get('content-range'), `bytes 0-9/${full.length}`);
  assert.is(first.headers.get('content-length'), '10');
  assert.ok(Buffer.from(await first.arrayBuffer()).equals(full.subarray(0, 10)));
  const suffix = await ctx.get(path, { headers: { range: 'bytes=-5' } });
  assert.is(suffix.status, 206);
  assert.ok(Buffer.from(await suffix.arrayBuffer()).equals(full.subarray(full.length - 5)));
  const outside = await ctx.get(path, { headers: { range: `bytes=${full.length + 10}-` } });
  assert.is(outside.status, 416);
  assert.is(outside.headers.get('content-range'), `bytes */${full.length}`);
  assert.type(((await outside.json()) as { error: string }).error, 'string');
  const changed = await ctx.get(path, { headers: { range: 'bytes=0-9', 'if-range': '"old"' } });
  assert.is(changed.status, 200);
  assert.is((await changed.arrayBuffer()).byteLength, full.length);
  const head = await ctx.get(path, { method: 'HEAD', headers: { range: 'bytes=0-9' } });
  assert.is(head.status, 206);
  assert.is((await head.arrayBuffer()).byteLength, 0);
});

download('Range on a case-variant path, answered live rather than from the tree', async () => {
  const response = await ctx.get('/api/plugin-versions/download/latest/VeLoCiTy', { headers: { range: 'bytes=2-5' } });
  assert.is(response.status, 206);
  assert.is((await response.arrayBuffer()).byteLength, 4);
});
download.run();

const byId = suite('GET /api/plugin-versions/:id');
byId.before(setup);
byId.after(teardown);

byId("each version's own answer is {version}, the list's entry, precomputed with its ETag", async () => {
  const versions = await listVersions();
  assert.ok(
    versions.some((v) => v.createdByUser !== undefined),
    'the demo names uploaders with profiles',
  );
  const served = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  for (const v of versions) {
    const path = `/api/plugin-versions/${v.id}`;
    assert.ok(served.routes.has(path), `${path} is precomputed`);
    const response = await ctx.get(path, { headers: { 'accept-encoding': 'identity' } });
    assert.is(response.status, 200, path);
    assert.match(response.headers.get('content-type')!, /^application\/json/);
    assert.is(response.headers.get('cache-control'), 'public, max-age=60');
    assert.is(response.headers.get('access-control-allow-origin'), '*');
    assert.is(response.headers.get('etag'), served.routes.get(path)!.headers.etag);
    assert.equal(await response.json(), { version: v });
  }
});

byId(
  'If-None-Match answers 304; HEAD has the headers and no body; a query string is answered live, the same bytes',
  async () => {
    const [v] = await listVersions();
    const path = `/api/plugin-versions/${v!.id}`;
    const full = await ctx.get(path, { headers: { 'accept-encoding': 'identity' } });
    const etag = full.headers.get('etag')!;
    const bytes = Buffer.from(await full.arrayBuffer());
    const fresh = await ctx.get(path, { headers: { 'if-none-match': etag, 'accept-encoding': 'identity' } });
    assert.is(fresh.status, 304);
    assert.is(fresh.headers.get('etag'), etag);
    assert.is((await fresh.arrayBuffer()).byteLength, 0);
    const head = await ctx.get(path, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } });
    assert.is(head.status, 200);
    assert.is(head.headers.get('etag'), etag);
    assert.is(Number(head.headers.get('content-length')), bytes.length);
    assert.is((await head.arrayBuffer()).byteLength, 0);
    const live = await ctx.get(`${path}?from=test`, { headers: { 'accept-encoding': 'identity' } });
    assert.is(live.headers.get('etag'), etag);
    assert.ok(Buffer.from(await live.arrayBuffer()).equals(bytes));
  },
);

const unknownIds: [string, string][] = [
  ['plugin-1-unknown', 'No plugin version with id "plugin-1-unknown"'],
  // A segment of another shape is no endpoint, as every unknown path is (edge.test.ts).
  ['latest', 'No endpoint at /api/plugin-versions/latest'],
  ['not-an-id', 'No endpoint at /api/plugin-versions/not-an-id'],
  ['feed', 'No endpoint at /api/plugin-versions/feed'],
];
for (const [id, message] of unknownIds) {
  byId(`404 /api/plugin-versions/${id}`, async () => {
    const response = await ctx.get(`/api/plugin-versions/${id}`);
    assert.is(response.status, 404);
    assert.match(response.headers.get('content-type')!, /^application\/json/);
    assert.is(response.headers.get('cache-control'), 'public, max-age=60');
    assert.equal(await response.json(), { error: message });
  });
}

byId('the routes beside it answer as before', async () => {
  const [v] = await listVersions();
  const cases: [string, number, RegExp][] = [
    ['/api/plugin-versions/feed.atom', 200, /^application\/atom\+xml/],
    ['/api/plugin-versions/latest/papermc', 200, /^application\/json/],
    [`/api/plugin-versions/download/${v!.id}`, 200, /^application\/java-archive/],
    [`/api/plugin-versions/download/${v!.id}.sha256`, 200, /^text\/plain/],
    [`/api/plugin-versions/by-hash/sha256/${v!.sha256}`, 200, /^application\/json/],
    ['/api/plugin-versions/update-check/papermc/21/1.0.0', 200, /^application\/json/],
    ['/api/plugin-versions/resolve/purpur', 200, /^application\/json/],
    ['/api/plugin-versions/downloads', 200, /^application\/json/],
  ];
  for (const [path, status, type] of cases) {
    const response = await ctx.get(path);
    assert.is(response.status, status, path);
    assert.match(response.headers.get('content-type')!, type, path);
    await response.arrayBuffer();
  }
});
byId.run();
