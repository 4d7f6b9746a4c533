import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { currentTreeDir, openTree, type Tree } from '../server/tree/open.ts';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import { JAVA_VERSIONS } from '../server/versions/java.ts';
import { SHARED_BUILD_CACHE, makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

// Release channels on every endpoint that picks a latest version: only releases unless the client
// asks with ?channel=beta (beta and release) or ?channel=alpha (all). The demo's 1.5.0-beta.1 for
// LeafMC on Java 21 is a beta; LeafMC's newest release there is 1.3.0.

const BETA = 'plugin-1793385900000-fbf68fcdf0';
const LEAF_RELEASE = 'plugin-1780413600000-af86d0a868';

type Version = {
  id: string;
  pluginVersion: string;
  channel: string;
  sha256: string;
  isLatest: Record<string, boolean>;
};
const ctx = {} as { workspace: Workspace; origin: RunningOrigin; tree: Tree };
const get = (path: string) => fetch(ctx.origin.url + path);
const versionAt = async (path: string) => {
  const response = await get(path);
  assert.is(response.status, 200, path);
  return ((await response.json()) as { version: Version }).version;
};

async function start(edit?: (dataDir: string) => Promise<void>) {
  ctx.workspace = await makeWorkspace({ build: !edit });
  if (edit) {
    await edit(ctx.workspace.dataDir);
    await runBuild({ dataDir: ctx.workspace.dataDir, distDir: ctx.workspace.distDir, cacheDir: SHARED_BUILD_CACHE });
  }
  ctx.origin = await startTestOrigin(ctx.workspace);
  ctx.tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
}
async function stop() {
  await ctx.origin.close();
  await ctx.workspace.remove();
}

const latest = suite('channels: latest and download-latest');
latest.before(() => start());
latest.after(stop);

// path (any letter case: lowercase ones are precomputed, others live) -> expected id
const latestCases: [string, string][] = [
  ['/api/plugin-versions/latest/leafmc', LEAF_RELEASE],
  ['/api/plugin-versions/latest/leafmc?channel=release', LEAF_RELEASE],
  ['/api/plugin-versions/latest/leafmc?channel=beta', BETA],
  ['/api/plugin-versions/latest/LeafMC?channel=alpha', BETA],
  ['/api/plugin-versions/latest/leafmc/21', LEAF_RELEASE],
  ['/api/plugin-versions/latest/LEAFMC/21?channel=release', LEAF_RELEASE],
  ['/api/plugin-versions/latest/leafmc/21?channel=beta', BETA],
  ['/api/plugin-versions/latest/leafmc/21?channel=alpha', BETA],
  ['/api/plugin-versions/latest/quilt?channel=beta', LEAF_RELEASE], // the beta is LeafMC's only
  ['/api/plugin-versions/latest/papermc/17?channel=alpha', 'plugin-1789470000000-7f26410443'], // no beta: as before
];
for (const [path, id] of latestCases) {
  latest(`${path} -> ${id === BETA ? 'the beta' : id}`, async () => {
    const version = await versionAt(path);
    assert.is(version.id, id);
    assert.is(version.channel, id === BETA ? 'beta' : 'release');
  });
}

const downloadCases: [string, string][] = [
  ['/api/plugin-versions/download/latest/leafmc', LEAF_RELEASE],
  ['/api/plugin-versions/download/latest/leafmc?channel=release', LEAF_RELEASE],
  ['/api/plugin-versions/download/latest/leafmc?channel=beta', BETA],
  ['/api/plugin-versions/download/latest/LeafMC?channel=alpha', BETA],
  ['/api/plugin-versions/download/latest/leafmc/21', LEAF_RELEASE],
  ['/api/plugin-versions/download/latest/leafmc/21?channel=beta', BETA],
  ['/api/plugin-versions/download/latest/LeafMC/21?channel=alpha', BETA],
  ['/api/plugin-versions/download/latest/LeafMC/21', LEAF_RELEASE],
];
for (const [path, id] of downloadCases) {
  latest(`${path} -> the JAR of ${id === BETA ? 'the beta' : id}`, async () => {
    const response = await get(path);
    assert.is(response.status, 200);
    const record = JSON.parse(await readFile(join(ctx.workspace.dataDir, 'versions', `${id}.json`), 'utf8'));
    assert.is(response.headers.get('etag'), `"${record.sha256}"`);
    assert.is(response.headers.get('cache-control'), 'public, max-age=60');
    assert.is((await response.arrayBuffer()).byteLength, record.fileSize);
  });
}

latest('a channel with nothing for the combination: 404 naming the channel', async () => {
  const response = await get('/api/plugin-versions/latest/leafmc/17?channel=beta');
  assert.is(response.status, 404);
  assert.equal(await response.json(), { error: 'No plugin version found for LeafMC on Java 17 in the beta channel' });
});

latest('the list: channel on every version; isLatest keeps its SPEC meaning on the release channel', async () => {
  const { versions } = (await (await get('/api/plugin-versions')).json()) as { versions: Version[] };
  for (const v of versions) assert.is(v.channel, v.id === BETA ? 'beta' : 'release', v.id);
  assert.equal(versions.find((v) => v.id === BETA)!.isLatest, { LeafMC: false });
  assert.equal(versions.find((v) => v.id === LEAF_RELEASE)!.isLatest, { Quilt: true, LeafMC: true });
});

const badChannels = ['stable', 'Beta', '', 'beta,alpha'];
for (const kind of ['latest', 'download/latest']) {
  for (const value of badChannels) {
    latest(`400 for ${kind}/papermc?channel=${value}, naming the parameter and the allowed values`, async () => {
      const response = await get(`/api/plugin-versions/${kind}/papermc?channel=${encodeURIComponent(value)}`);
      assert.is(response.status, 400);
      assert.equal(await response.json(), { error: 'channel must be one of release, beta, alpha' });
    });
  }
}
latest('400 for a repeated channel, on a path with a Java version too', async () => {
  const response = await get('/api/plugin-versions/latest/papermc/21?channel=beta&channel=alpha');
  assert.is(response.status, 400);
  assert.equal(await response.json(), { error: 'channel must be one of release, beta, alpha' });
});

latest('the tree holds every ?channel= answer, and each equals its live twin', async () => {
  const channels = ['release', 'beta', 'alpha'];
  let checked = 0;
  for (const software of SERVER_SOFTWARE) {
    for (const kind of ['latest', 'download/latest']) {
      for (const java of ['', ...JAVA_VERSIONS.map((j) => `/${j}`)]) {
        for (const channel of channels) {
          const path = `/api/plugin-versions/${kind}/${software.toLowerCase()}${java}?channel=${channel}`;
          const entry = ctx.tree.routes.get(path);
          assert.ok(entry, `${path} is precomputed`);
          if (kind === 'download/latest') continue; // JARs: the download cases above
          // A letter case the manifest does not hold is answered live by the same code.
          const live = await get(path.replace(`/${software.toLowerCase()}`, `/${software.toUpperCase()}`));
          assert.is(live.status, entry!.status, path);
          const file = await readFile(join(ctx.tree.dir, entry!.file));
          assert.ok(Buffer.from(await live.arrayBuffer()).equals(file), `${path}: live == precomputed`);
          checked++;
        }
      }
    }
  }
  assert.is(checked, SERVER_SOFTWARE.length * (1 + JAVA_VERSIONS.length) * 3);
});
latest.run();

const unchanged = suite('channels: data without channels behaves as SPEC 2.4 says');
unchanged.before(() =>
  start(async (dataDir) => {
    // The demo data as it was before channels: the pre-release carries no channel.
    const file = join(dataDir, 'versions', `${BETA}.json`);
    const { channel: _channel, ...record } = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify(record));
  }),
);
unchanged.after(stop);

unchanged('the newest createdAt is latest, whatever its version string, and isLatest says so', async () => {
  assert.is((await versionAt('/api/plugin-versions/latest/leafmc')).id, BETA);
  assert.is((await versionAt('/api/plugin-versions/latest/leafmc/21')).id, BETA);
  const { versions } = (await (await get('/api/plugin-versions')).json()) as { versions: Version[] };
  const beta = versions.find((v) => v.id === BETA)!;
  assert.is(beta.channel, 'release');
  assert.equal(beta.isLatest, { LeafMC: true });
  assert.equal(versions.find((v) => v.id === LEAF_RELEASE)!.isLatest, { Quilt: true, LeafMC: false });
});

unchanged('every latest endpoint answers the same bytes with and without ?channel=', async () => {
  for (const software of SERVER_SOFTWARE) {
    for (const kind of ['latest', 'download/latest']) {
      for (const java of ['', ...JAVA_VERSIONS.map((j) => `/${j}`)]) {
        const path = `/api/plugin-versions/${kind}/${software.toLowerCase()}${java}`;
        const plain = await get(path);
        const plainBytes = Buffer.from(await plain.arrayBuffer());
        for (const channel of ['release', 'beta', 'alpha']) {
          const asked = await get(`${path}?channel=${channel}`);
          assert.is(asked.status, plain.status, `${path}?channel=${channel}`);
          if (plain.status !== 200) continue; // a 404 names the channel asked for
          assert.ok(Buffer.from(await asked.arrayBuffer()).equals(plainBytes), `${path}?channel=${channel}`);
          assert.is(asked.headers.get('etag'), plain.headers.get('etag'));
        }
      }
    }
  }
});
unchanged.run();
