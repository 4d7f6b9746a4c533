import { readFile, readdir, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { suite } from 'uvu';
import { listVersionPaths } from '../build/paths.ts';
import { namedMinecraftVersions } from '../build/resolve-paths.ts';
import { resolveInputsOf } from '../server/tree/answer-inputs.ts';
import { byHashPath, downloadPath, versionPath } from '../server/versions/paths.ts';
import { pickLatest } from '../server/versions/latest.ts';
import { presentVersion } from '../server/versions/present.ts';
import type { CatalogVersion } from '../server/versions/schema.ts';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { DataError } from '../server/data-files.ts';
import { currentTreeDir, openTree, readTreeCatalog, type Tree } from '../server/tree/open.ts';
import { jarPath } from '../server/versions/catalog.ts';
import {
  SHARED_BUILD_CACHE,
  addPaperVersion,
  buildApi,
  makeWorkspace,
  pluginJar,
  snapshotTree,
  spawnScript,
  startTestOrigin,
  until,
  type Workspace,
  allRoutes,
  DEPOT_CLI,
} from './helpers.ts';

const ctx = {} as { workspace: Workspace };

const releaseArgs = (jar: string, version: string) => [
  'release',
  jar,
  '--version',
  version,
  '--java',
  '21',
  '--software',
  'PaperMC',
];

/** What a running origin says is the latest PaperMC build for Java 21, and whether its download is the JAR. */
async function servedLatest(url: string, jar: Uint8Array) {
  const latest = (await (await fetch(`${url}/api/plugin-versions/latest/papermc/21`)).json()) as {
    version: { pluginVersion: string; downloadUrl: string };
  };
  const download = await fetch(url + latest.version.downloadUrl);
  const bytes = Buffer.from(await download.arrayBuffer());
  return { version: latest.version.pluginVersion, download: download.status === 200 && bytes.equals(jar) };
}

/** The site's version history page as served: does it list `version`? */
async function historyLists(url: string, version: string) {
  const page = await fetch(`${url}/versions`);
  assert.is(page.status, 200, '/versions is served');
  return (await page.text()).includes(version);
}

const apiFirst = suite('a release: the API first, then the site');
apiFirst.before.each(async () => {
  ctx.workspace = await makeWorkspace({ site: true });
});
apiFirst.after.each(() => ctx.workspace.remove());

for (const [moment, line] of [
  ['while the site is built (killed then)', '[build] swap:'],
  ['during the site swap (killed then)', '[build] site:'],
] as const) {
  apiFirst(`is answered by a running origin ${moment}, and the next build completes the site`, async () => {
    const origin = await startTestOrigin(ctx.workspace);
    try {
      const bytes = pluginJar('5.0.0');
      const jar = join(ctx.workspace.dir, 'Api-5.0.0.jar');
      await writeFile(jar, bytes);
      const release = spawnScript(DEPOT_CLI, releaseArgs(jar, '5.0.0'), ctx.workspace);
      try {
        await until(() => release.stderr().includes(line), `the release reaches ${line}`, 120_000);
      } finally {
        // Killed then, or when it never got there: a release left running would build on meanwhile.
        release.child.kill('SIGKILL');
        await release.exited;
      }
      // The API tree was swapped in before the kill: the origin answers the release, metadata and download.
      await until(
        async () => (await servedLatest(origin.url, bytes)).version === '5.0.0',
        'the origin answers the release',
      );
      assert.equal(await servedLatest(origin.url, bytes), { version: '5.0.0', download: true });
      // Whatever tree the kill left is whole: every route of its manifest has its file.
      const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
      for (const entry of allRoutes(tree.routes).values()) await stat(join(tree.dir, entry.file));
      assert.ok(tree.routes.has('/versions'), 'the site is served meanwhile (the previous one or the new one)');
      assert.is((await fetch(`${origin.url}/versions`)).status, 200);

      // `--if-changed` does not take a tree whose site is pending for a finished one.
      const pending = !(await siteIsCurrent());
      if (line === '[build] swap:') assert.ok(pending, 'killed while the site was built: the previous site is served');
      const next = await runBuild({
        dataDir: ctx.workspace.dataDir,
        distDir: ctx.workspace.distDir,
        cacheDir: SHARED_BUILD_CACHE,
        ifChanged: true,
      });
      if (pending) assert.not.ok(next.skipped, 'a tree whose site is pending is built again');
      await until(() => historyLists(origin.url, '5.0.0'), 'the site lists the release');
      assert.equal(await servedLatest(origin.url, bytes), { version: '5.0.0', download: true });
    } finally {
      await origin.close();
    }
  });
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** Was the killed build's site swap done (its tree's site lists the release)? */
async function siteIsCurrent(): Promise<boolean> {
  const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const entry = tree.routes.get('/versions')!;
  return (await readFile(join(tree.dir, entry.file), 'utf8')).includes('5.0.0');
}

apiFirst('an origin answers a new version before the build has finished the site', async () => {
  const origin = await startTestOrigin(ctx.workspace);
  try {
    const bytes = pluginJar('5.1.0');
    await addPaperVersion(ctx.workspace.dataDir, '5.1.0', bytes);
    let apiSwapped = false;
    const built = runBuild({
      dataDir: ctx.workspace.dataDir,
      distDir: ctx.workspace.distDir,
      cacheDir: SHARED_BUILD_CACHE,
      // The first swap: the release's delta tree, or the API's tree while Astro compiles the site.
      log: (line) => (apiSwapped ||= line.startsWith('[build] swap:')),
    });
    await until(() => apiSwapped, 'the release is swapped in', 60_000);
    let servedBeforeSite = false;
    await until(async () => {
      const served = await servedLatest(origin.url, bytes);
      servedBeforeSite = served.version === '5.1.0' && served.download && !(await historyLists(origin.url, '5.1.0'));
      return served.version === '5.1.0';
    }, 'the origin answers the new version');
    assert.ok(servedBeforeSite, 'answered, download included, while the site still showed the previous data');
    const apiTree = (await currentTreeDir(ctx.workspace.distDir))!;
    await built;
    await until(() => historyLists(origin.url, '5.1.0'), 'the site lists the new version');
    // The tree for the origins alone carries no deploy configs; the finished one does.
    const finished = (await currentTreeDir(ctx.workspace.distDir))!;
    assert.is.not(finished, apiTree);
    assert.ok(await exists(join(apiTree, 'manifest.json')), 'the tree the site follows is kept');
    assert.not.ok(await exists(join(apiTree, 'nginx.conf')), 'no nginx.conf in the tree the site follows');
    assert.ok(await exists(join(finished, 'nginx.conf')), 'nginx.conf in the finished tree');
    // Static hosts' _headers and _redirects come from export-static, a fixed number of rules: no tree has them.
    for (const config of ['_headers', '_redirects', '404.html'])
      assert.not.ok(await exists(join(finished, config)), `no ${config} in the finished tree`);
  } finally {
    await origin.close();
  }
});

apiFirst('a release is served at once: the answers it changed are answered live until precomputed', async () => {
  const origin = await startTestOrigin(ctx.workspace, { rateLimit: null });
  try {
    const { dataDir, distDir } = ctx.workspace;
    const bytes = pluginJar('5.2.0');
    await addPaperVersion(dataDir, '5.2.0', bytes);
    const swaps: string[] = [];
    await runBuild({
      dataDir,
      distDir,
      cacheDir: SHARED_BUILD_CACHE,
      log: (line) => {
        const swapped =
          /^\[build\] swap: \S+ -> (\S+) \(what read the change is answered live until precomputed\)/.exec(line);
        if (swapped) swaps.push(swapped[1]!);
      },
    });
    assert.is(swaps.length, 1, 'the first swap names the answers left to the live routes');
    const firstManifest = await readFile(join(swaps[0]!, 'manifest.json'), 'utf8');
    assert.ok(firstManifest.length < 4096, 'the first tree names the previous one rather than copying its routes');
    const first = await openTree(swaps[0]!);
    const finished = await openTree((await currentTreeDir(distDir))!);
    const live = [...finished.routes.paths()].filter((path) => path.startsWith('/api/') && !first.routes.has(path));
    const latest = '/api/plugin-versions/latest/papermc/21';
    assert.ok(live.includes(latest), `${latest} is among the ${live.length} answers left live`);
    assert.ok(first.routes.has('/api/openapi.json'), "unchanged answers are the previous tree's");
    assert.ok(first.routes.has('/versions'), 'the previous site is carried');
    assert.ok(
      first.catalog.versions.some((v) => v.pluginVersion === '5.2.0'),
      "the first tree's catalog has the release",
    );

    // The origin on the delta tree: the release, metadata and download, and every answer it left
    // live is the one the finished tree holds precomputed (status, type, bytes and ETag).
    await pointCurrentAt(distDir, swaps[0]!);
    await until(async () => (await servedLatest(origin.url, bytes)).version === '5.2.0', 'the first tree is served');
    assert.equal(await servedLatest(origin.url, bytes), { version: '5.2.0', download: true });
    for (const path of live) {
      const entry = finished.routes.get(path)!;
      const answer = await fetch(origin.url + path, { headers: { 'accept-encoding': 'identity' } });
      const body = Buffer.from(await answer.arrayBuffer());
      assert.is(answer.status, entry.status, `${path}: status`);
      assert.is(answer.headers.get('content-type'), entry.headers['content-type']!, `${path}: type`);
      assert.is(answer.headers.get('etag') ?? undefined, entry.headers.etag, `${path}: ETag`);
      assert.ok(body.equals(await readFile(join(finished.dir, entry.file))), `${path}: bytes`);
    }
  } finally {
    await origin.close();
  }
});

/** dist/current -> `treeDir`, in one rename, as a swap does. */
async function pointCurrentAt(distDir: string, treeDir: string) {
  const link = join(distDir, '.current-test');
  await symlink(relative(distDir, treeDir), link);
  await rename(link, join(distDir, 'current'));
}

apiFirst.run();

/**
 * What a build asks the app again, from the version objects (`presentVersion`: the record and its
 * isLatest) that differ between the previous tree and the new one: a version's download and checksum
 * files when its record changed (a withdrawn one's download also when its softwares' versions on its
 * Java version did: one of them is its successor); its own answer and a lookup by hash when its version object changed; a software's
 * latest, JAR and latest badges when one of its versions' objects changed (on the Java version the
 * path names, if any), its feed likewise; a resolve answer when a changed object belongs to a
 * software of its chain and runs on its Java (any Java for a 404 or without one); an update check
 * when any version object changed (issue 31: it names newer builds of any software and Java); anything else
 * (the lists, the feed of all) always. The rest is kept.
 */
/** What a server runs plugins of at all, written here as the issue says it, not imported from the code under test. */
const kindOf = (software: string) =>
  ['bungeecord', 'waterfall', 'velocity'].includes(software.toLowerCase())
    ? 'proxy'
    : software.toLowerCase() === 'quilt'
      ? 'quilt'
      : 'server';

function answersAsked(before: Tree, after: Tree): number {
  const shown = (tree: Tree, v: CatalogVersion) => JSON.stringify(presentVersion(tree.catalog, v, false));
  const changed = after.catalog.versions.filter((v) => {
    const earlier = before.catalog.byId.get(v.id);
    return earlier === undefined || shown(before, earlier) !== shown(after, v);
  });
  const recordChanged = (id: string) =>
    JSON.stringify(before.catalog.byId.get(id)) !== JSON.stringify(after.catalog.byId.get(id));
  const touches = (software: string, java?: (v: CatalogVersion) => boolean) =>
    changed.some((v) => v.serverSoftware.some((s) => s.toLowerCase() === software) && (!java || java(v)));
  const byHash = new Map(
    after.catalog.versions.flatMap((v) => [
      [byHashPath('sha256', v.sha256), v],
      [byHashPath('sha512', v.sha512), v],
    ]),
  );
  // A withdrawn version's JAR links to its successor: the newest of its softwares on its Java version.
  const successorMoved = (id: string, path: string) => {
    const version = after.catalog.byId.get(id)!;
    if (!version.withdrawn || path !== downloadPath(id)) return false;
    return version.serverSoftware.some((s) => touches(s.toLowerCase(), (v) => v.javaVersion === version.javaVersion));
  };
  const all = listVersionPaths(after.catalog);
  const asked = all.filter((path) => {
    const file = /^\/api\/plugin-versions\/download\/(plugin-[^/.]+)/.exec(path);
    if (file) return recordChanged(file[1]!) || successorMoved(file[1]!, path);
    const own = /^\/api\/plugin-versions\/(plugin-[^/.?]+)$/.exec(path);
    if (own) return changed.some((v) => v.id === own[1]);
    const found = byHash.get(path);
    if (found) return changed.includes(found);
    const resolve = resolveInputsOf(path);
    if (resolve) {
      const anyJava = resolve.java === undefined || after.routes.get(path)?.status === 404;
      return resolve.chain.some((software) =>
        touches(software, anyJava ? undefined : (v) => Number(v.javaVersion) <= Number(resolve.java)),
      );
    }
    // Issue 31: an update check names newer builds of any software of its kind (a game server, a
    // proxy, Quilt) and any Java (newerElsewhere).
    const check = /^\/api\/plugin-versions\/update-check\/([a-z]+)\//.exec(path);
    if (check) return changed.some((v) => v.serverSoftware.some((s) => kindOf(s) === kindOf(check[1]!)));
    const software =
      /^\/api\/(?:plugin-versions\/(?:latest|download\/latest|feed)|badges\/latest)\/([a-z]+)(?:\/(\d+))?/.exec(path);
    if (software) return touches(software[1]!, software[2] ? (v) => v.javaVersion === software[2] : undefined);
    return true;
  });
  assert.ok(asked.length < all.length / 2, `most answers are kept (${asked.length} of ${all.length} asked)`);
  return asked.length;
}

const servedFirst = suite('a release and a user: served from the current tree, then data/ loaded');
servedFirst.before.each(async () => {
  ctx.workspace = await makeWorkspace();
});
servedFirst.after.each(() => ctx.workspace.remove());

/**
 * The delta tree's catalog as an origin that holds its base's makes it (from the head's versions,
 * catalog.json moved away meanwhile, so it cannot be read), which must equal catalog.json's.
 */
async function assertCatalogFromBase(baseDir: string, firstDir: string) {
  const base = await openTree(baseDir);
  void base.catalog;
  const file = join(firstDir, 'catalog.json');
  await rename(file, `${file}.away`);
  let derived: Tree;
  try {
    derived = await openTree(firstDir, base);
    void derived.catalog;
  } finally {
    await rename(`${file}.away`, file);
  }
  const parsed = await readTreeCatalog(firstDir);
  assert.equal(derived.catalog.versions, parsed.catalog.versions, 'the same versions, in the same order');
  assert.equal([...derived.catalog.users.values()], [...parsed.catalog.users.values()], 'the same users');
}

/** The trees a CLI's progress swapped in, in order, and whether a tree was swapped in before data/ was loaded. */
function swapsOf(stderr: string) {
  const lines = stderr.split('\n');
  const swaps = lines.flatMap((line) => /^\[build\] swap: \S+ -> (\S+)/.exec(line)?.[1] ?? []);
  const firstSwap = lines.findIndex((line) => line.startsWith('[build] swap:'));
  const load = lines.findIndex((line) => line.startsWith('[build] load:'));
  return { swaps, beforeLoad: firstSwap !== -1 && load !== -1 && firstSwap < load };
}

servedFirst(
  'depot release: its delta tree is the served catalog and the release; a version added to data/ by hand follows',
  async () => {
    const { dataDir, distDir, dir } = ctx.workspace;
    const base = (await currentTreeDir(distDir))!;
    // Added by hand since the current tree was built: not in the served catalog.
    await addPaperVersion(dataDir, '7.0.0', pluginJar('7.0.0'));
    const jar = join(dir, 'Served-7.1.0.jar');
    await writeFile(jar, pluginJar('7.1.0'));
    const release = spawnScript(DEPOT_CLI, releaseArgs(jar, '7.1.0'), ctx.workspace);
    assert.is(await release.exited, 0, release.stderr());
    const { swaps, beforeLoad } = swapsOf(release.stderr());
    assert.ok(beforeLoad, `the release is swapped in before data/ is loaded:\n${release.stderr()}`);
    // Then data/'s own delta tree (the version added by hand is answered live) and the full tree.
    assert.is(swaps.length, 3, release.stderr());
    const first = await openTree(swaps[0]!);
    const shown = (tree: Tree) => tree.catalog.versions.map((v) => v.pluginVersion);
    assert.ok(shown(first).includes('7.1.0'), "the first tree's catalog has the release");
    assert.not.ok(shown(first).includes('7.0.0'), 'but not what data/ gained by hand since the served tree');
    assert.is(first.routes.get('/api/openapi.json')?.status, 200, "unchanged answers are the served tree's");
    await assertCatalogFromBase(base, swaps[0]!);
    const finished = await openTree((await currentTreeDir(distDir))!);
    assert.is(finished.dir, swaps[2]);
    for (const version of ['7.0.0', '7.1.0'])
      assert.ok(shown(finished).includes(version), `${version} in the full tree`);
  },
);

servedFirst('depot user add: swapped in before data/ is loaded, the user shown by the delta tree', async () => {
  const base = (await currentTreeDir(ctx.workspace.distDir))!;
  const add = spawnScript(DEPOT_CLI, ['user', 'add', 'quick-user'], ctx.workspace);
  assert.is(await add.exited, 0, add.stderr());
  const { swaps, beforeLoad } = swapsOf(add.stderr());
  assert.ok(beforeLoad, `the user is swapped in before data/ is loaded:\n${add.stderr()}`);
  assert.ok((await openTree(swaps[0]!)).catalog.users.has('quick-user'), "the first tree's catalog has the user");
  await assertCatalogFromBase(base, swaps[0]!);
  // data/ holds nothing else: the full tree follows, with no delta tree of data/'s own.
  assert.is(swaps.length, 2, add.stderr());
});

servedFirst('a refused release swaps nothing in; a release onto a delta tree loads data/ first', async () => {
  const { distDir, dir } = ctx.workspace;
  const jar = join(dir, 'Twice-7.2.0.jar');
  await writeFile(jar, pluginJar('7.2.0'));
  const once = spawnScript(DEPOT_CLI, releaseArgs(jar, '7.2.0'), ctx.workspace);
  assert.is(await once.exited, 0, once.stderr());
  const again = spawnScript(DEPOT_CLI, releaseArgs(jar, '7.3.0'), ctx.workspace);
  assert.is(await again.exited, 1);
  assert.match(again.stderr(), /already released as plugin-/);
  assert.is(swapsOf(again.stderr()).swaps.length, 0, 'a refusal swaps nothing in');
  // A delta tree is current, as a release killed between its swaps leaves it: it is no base, so the
  // next release loads data/ first, and is served.
  await pointCurrentAt(distDir, swapsOf(once.stderr()).swaps[0]!);
  const other = join(dir, 'Next-7.4.0.jar');
  await writeFile(other, pluginJar('7.4.0'));
  const next = spawnScript(DEPOT_CLI, releaseArgs(other, '7.4.0'), ctx.workspace);
  assert.is(await next.exited, 0, next.stderr());
  assert.not.ok(swapsOf(next.stderr()).beforeLoad, next.stderr());
  const finished = await openTree((await currentTreeDir(distDir))!);
  const shown = finished.catalog.versions.map((v) => v.pluginVersion);
  assert.ok(shown.includes('7.2.0') && shown.includes('7.4.0'), shown.join());
});

const incremental = suite('incremental build');
incremental.before.each(async () => {
  ctx.workspace = await makeWorkspace({ site: true });
});
incremental.after.each(() => ctx.workspace.remove());

for (const [release, fields] of [
  ['PaperMC on Java 21', {}],
  // Folia's newest builds are also PaperMC's: their isLatest changes for a software the release does not name.
  ['Folia and CanvasMC on Java 17', { serverSoftware: ['Folia', 'CanvasMC'], javaVersion: '17' }],
  ['a Velocity beta on Java 11', { serverSoftware: ['Velocity'], javaVersion: '11', channel: 'beta' }],
] as const) {
  incremental(
    `a release (${release}) reusing the previous tree gives the same tree, file for file, as a full build`,
    async () => {
      const { dataDir, distDir } = ctx.workspace;
      const lines: string[] = [];
      const before = await openTree((await currentTreeDir(distDir))!);
      await addPaperVersion(dataDir, '6.0.0', pluginJar('6.0.0'), {
        ...fields,
        serverSoftware: [...(fields.serverSoftware ?? ['PaperMC'])],
      });
      await runBuild({ dataDir, distDir, cacheDir: SHARED_BUILD_CACHE, log: (line) => lines.push(line) });
      const asked = answersAsked(before, await openTree((await currentTreeDir(distDir))!));
      assert.ok(
        lines.some((line) => line.includes(`prerender: `) && line.includes(` ${asked} answered anew (`)),
        `the release reused the previous tree: ${asked} answers asked, ${lines.join('\n')}`,
      );
      lines.length = 0;
      const incrementalTree = (await currentTreeDir(distDir))!;
      const a = await snapshotTree(incrementalTree);
      await rm(distDir, { recursive: true, force: true });
      const full = await runBuild({ dataDir, distDir, cacheDir: SHARED_BUILD_CACHE, log: (line) => lines.push(line) });
      assert.ok(
        lines.some((line) => / 0 unchanged from the previous tree/.test(line)),
        'the second build had no previous tree',
      );
      const b = await snapshotTree(full.treeDir);
      assert.equal(Object.keys(a).sort(), Object.keys(b).sort(), 'the same files');
      for (const file of Object.keys(a)) assert.is(a[file], b[file], `${file}: same bytes`);
      assert.is(full.treeDir.split('/').pop(), incrementalTree.split('/').pop(), 'the same tree name');
    },
  );
}

incremental('answers whose inputs did not change are reused; a changed record is answered anew', async () => {
  const { dataDir, distDir } = ctx.workspace;
  const lines: string[] = [];
  const first = await openTree((await currentTreeDir(distDir))!);
  const version = first.catalog.versions.at(-1)!;
  const recordFile = join(dataDir, 'versions', `${version.id}.json`);
  const record = JSON.parse(await readFile(recordFile, 'utf8'));
  await writeFile(recordFile, JSON.stringify({ ...record, fileName: 'Renamed.jar' }));
  await runBuild({ dataDir, distDir, cacheDir: SHARED_BUILD_CACHE, site: false, log: (line) => lines.push(line) });
  const prerender = lines.find((line) => line.startsWith('[build] prerender:'))!;
  const tree = await openTree((await currentTreeDir(distDir))!);
  assert.match(prerender, ` ${answersAsked(first, tree)} answered anew (`);
  assert.not.match(prerender, / 0 unchanged from the previous tree/);
  const download = tree.routes.get(`/api/plugin-versions/download/${version.id}`)!;
  assert.match(download.headers['content-disposition']!, /Renamed\.jar/);
});
incremental('a changed user asks only the answers that name users: the lists, the feeds and each version', async () => {
  const { dataDir, distDir } = ctx.workspace;
  const lines: string[] = [];
  const usersFile = join(dataDir, 'users.json');
  const users = JSON.parse(await readFile(usersFile, 'utf8')) as { nickname?: string | null }[];
  users[0]!.nickname = 'Alice, renamed';
  await writeFile(usersFile, JSON.stringify(users));
  await runBuild({ dataDir, distDir, cacheDir: SHARED_BUILD_CACHE, site: false, log: (line) => lines.push(line) });
  const prerender = lines.find((line) => line.startsWith('[build] prerender:'))!;
  const feeds = 1 + SERVER_SOFTWARE.length;
  const tree = await openTree((await currentTreeDir(distDir))!);
  const lists = 1 + namedMinecraftVersions(tree.catalog).length;
  // Each version's own answer joins its uploader's profile: which user changed is not told apart.
  const versions = tree.catalog.versions.length;
  assert.match(
    prerender,
    ` ${lists + feeds + versions} answered anew (`,
    'the lists (all, and per Minecraft version), every feed and every version by id',
  );
  const list = tree.routes.get('/api/plugin-versions')!;
  assert.match(await readFile(join(tree.dir, list.file), 'utf8'), /"nickname":"Alice, renamed"/);
});

incremental.run();

const withdrawn = suite('incremental build: a withdraw, then a release that gives the withdrawn version a successor');
withdrawn.before.each(async () => {
  ctx.workspace = await makeWorkspace();
});
withdrawn.after.each(() => ctx.workspace.remove());

/** Builds data/ as it stands on the current tree, then from nothing: the two trees must be the same, file for file. */
async function assertIncrementalIsFull(): Promise<Tree> {
  const { dataDir, distDir } = ctx.workspace;
  const before = await openTree((await currentTreeDir(distDir))!);
  const lines: string[] = [];
  await runBuild({ dataDir, distDir, cacheDir: SHARED_BUILD_CACHE, site: false, log: (line) => lines.push(line) });
  const incrementalTree = await openTree((await currentTreeDir(distDir))!);
  const asked = answersAsked(before, incrementalTree);
  assert.ok(
    lines.some((line) => line.includes('prerender: ') && line.includes(` ${asked} answered anew (`)),
    `the previous tree was reused: ${asked} answers asked, ${lines.join('\n')}`,
  );
  const a = await snapshotTree(incrementalTree.dir);
  await rm(distDir, { recursive: true, force: true });
  const full = await runBuild({ dataDir, distDir, cacheDir: SHARED_BUILD_CACHE, site: false });
  const b = await snapshotTree(full.treeDir);
  assert.equal(Object.keys(a).sort(), Object.keys(b).sort(), 'the same files');
  for (const file of Object.keys(a)) assert.is(a[file], b[file], `${file}: same bytes`);
  return openTree(full.treeDir);
}

withdrawn(
  "each build reusing the previous tree gives a full build's tree: the withdrawn JAR's Link follows",
  async () => {
    const { dataDir } = ctx.workspace;
    // PaperMC 1.3.0 on Java 21: the only build of its softwares on Java 21, so nothing to move to yet.
    const id = 'plugin-1780412400000-b878942086';
    const file = join(dataDir, 'versions', `${id}.json`);
    const record = JSON.parse(await readFile(file, 'utf8'));
    const withdrawal = { reason: 'Corrupts worlds', at: '2026-11-02T10:15:30.000Z', by: 'alice' };
    await writeFile(file, JSON.stringify({ ...record, withdrawn: withdrawal }));
    const afterWithdraw = await assertIncrementalIsFull();
    const entry = () => afterWithdraw.routes.get(downloadPath(id))!;
    assert.is(entry().headers.deprecation, '@1793614530');
    assert.is(entry().headers.link, undefined, 'no successor yet');
    await addPaperVersion(dataDir, '6.0.0', pluginJar('6.0.0'));
    const afterRelease = await assertIncrementalIsFull();
    const successor = afterRelease.catalog.versions.find((v) => v.pluginVersion === '6.0.0')!;
    assert.is(
      afterRelease.routes.get(downloadPath(id))!.headers.link,
      `<${downloadPath(successor.id)}>; rel="successor-version"`,
    );
  },
);
withdrawn.run();
servedFirst.run();

const ownAnswer = suite("a version's own answer: refreshed by the change that reads it, kept otherwise");
ownAnswer.before.each(async () => {
  ctx.workspace = await makeWorkspace();
});
ownAnswer.after.each(() => ctx.workspace.remove());

/** A build of data/ as it stands, and the trees it swapped in: the delta tree first, then the full one. */
async function buildSwaps(): Promise<{ first: Tree; finished: Tree }> {
  const { dataDir, distDir } = ctx.workspace;
  const swaps: string[] = [];
  await runBuild({
    dataDir,
    distDir,
    cacheDir: SHARED_BUILD_CACHE,
    site: false,
    log: (line) => {
      const swapped = /^\[build\] swap: \S+ -> (\S+) \(what read the change is answered live/.exec(line);
      if (swapped) swaps.push(swapped[1]!);
    },
  });
  assert.is(swaps.length, 1, 'one delta tree');
  return { first: await openTree(swaps[0]!), finished: await openTree((await currentTreeDir(distDir))!) };
}

/** An origin on the delta tree answers `id`'s own answer as the finished tree holds it precomputed; returns the object. */
async function assertAnsweredLive(url: string, finished: Tree, id: string) {
  const path = versionPath(id);
  const entry = finished.routes.get(path)!;
  const answer = await fetch(url + path, { headers: { 'accept-encoding': 'identity' } });
  const body = Buffer.from(await answer.arrayBuffer());
  assert.is(answer.status, 200, path);
  assert.is(answer.headers.get('etag') ?? undefined, entry.headers.etag, `${path}: ETag`);
  assert.ok(body.equals(await readFile(join(finished.dir, entry.file))), `${path}: bytes`);
  return (JSON.parse(body.toString('utf8')) as { version: { isLatest: Record<string, boolean>; fileName: string } })
    .version;
}

ownAnswer("a release: its own answer and the displaced latest's are answered live, the others kept", async () => {
  const origin = await startTestOrigin(ctx.workspace, { rateLimit: null });
  try {
    const before = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
    const displaced = pickLatest(before.catalog.latest, 'PaperMC', '21')!;
    const untouched = before.catalog.versions.filter((v) => !v.serverSoftware.includes('PaperMC'));
    assert.ok(untouched.length > 0);
    await addPaperVersion(ctx.workspace.dataDir, '5.3.0', pluginJar('5.3.0'));
    const { first, finished } = await buildSwaps();
    const added = finished.catalog.versions.find((v) => v.pluginVersion === '5.3.0')!;
    assert.not.ok(first.routes.has(versionPath(displaced.id)), 'the version it displaced as latest reads the release');
    for (const v of untouched) assert.ok(first.routes.has(versionPath(v.id)), `${v.id}: kept from the previous tree`);
    await pointCurrentAt(ctx.workspace.distDir, first.dir);
    await until(
      async () => (await fetch(origin.url + versionPath(added.id))).status === 200,
      'the delta tree is served',
    );
    assert.is((await assertAnsweredLive(origin.url, finished, added.id)).isLatest.PaperMC, true);
    assert.is((await assertAnsweredLive(origin.url, finished, displaced.id)).isLatest.PaperMC, false);
  } finally {
    await origin.close();
  }
});

ownAnswer("an edit of a record: that version's answer is answered live, the others kept", async () => {
  const origin = await startTestOrigin(ctx.workspace, { rateLimit: null });
  try {
    const before = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
    const edited = before.catalog.versions.at(-1)!;
    const recordFile = join(ctx.workspace.dataDir, 'versions', `${edited.id}.json`);
    const record = JSON.parse(await readFile(recordFile, 'utf8'));
    await writeFile(recordFile, JSON.stringify({ ...record, fileName: 'Edited.jar' }));
    const { first, finished } = await buildSwaps();
    assert.not.ok(first.routes.has(versionPath(edited.id)), 'the edited version reads the edit');
    for (const v of before.catalog.versions.filter((v) => v.id !== edited.id))
      assert.ok(first.routes.has(versionPath(v.id)), `${v.id}: kept from the previous tree`);
    await pointCurrentAt(ctx.workspace.distDir, first.dir);
    await until(
      async () => (await (await fetch(origin.url + versionPath(edited.id))).text()).includes('Edited.jar'),
      'the delta tree is served',
    );
    assert.is((await assertAnsweredLive(origin.url, finished, edited.id)).fileName, 'Edited.jar');
  } finally {
    await origin.close();
  }
});
ownAnswer.run();

const loadCache = suite('loading data/: JARs hashed once');
loadCache.before.each(async () => {
  ctx.workspace = await makeWorkspace();
});
loadCache.after.each(() => ctx.workspace.remove());

const build = () => buildApi(ctx.workspace);

loadCache('a JAR rewritten in place after a build (same size, other bytes) is read again and refused', async () => {
  await build();
  const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const version = tree.catalog.versions[0]!;
  const path = jarPath(ctx.workspace.dataDir, version.id);
  const bytes = await readFile(path);
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
  await writeFile(path, bytes);
  const error = await build().then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(error, DataError);
  assert.match((error as Error).message, /sha256: does not match/);
});

loadCache('a JAR replaced by another file of the same size and times is read again and refused', async () => {
  await build();
  const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const version = tree.catalog.versions[0]!;
  const path = jarPath(ctx.workspace.dataDir, version.id);
  const { atime, mtime, size } = await stat(path);
  const bytes = await readFile(path);
  bytes[0] = bytes[0]! ^ 0xff;
  await rm(path);
  await writeFile(path, bytes);
  await utimes(path, atime, mtime);
  assert.is((await stat(path)).size, size);
  const error = await build().then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(error, DataError);
  assert.match((error as Error).message, /sha256: does not match/);
});

loadCache('a removed JAR is missed even when it was hashed before', async () => {
  await build();
  const names = await readdir(join(ctx.workspace.dataDir, 'jars'));
  await rm(join(ctx.workspace.dataDir, 'jars', names[0]!));
  const error = await build().then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(error, DataError);
  assert.match((error as Error).message, /no JAR at/);
});
loadCache.run();
