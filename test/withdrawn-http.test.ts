import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { staticLayoutConfigs } from '../build/static-layout-configs.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { Manifest } from '../server/tree/format.ts';
import { currentTreeDir } from '../server/tree/open.ts';
import { CHANNELS } from '../server/versions/channels.ts';
import { downloadPath, latestPath, resolvePath, updateCheckPath, versionPath } from '../server/versions/paths.ts';
import type { PluginVersionRecord } from '../server/versions/schema.ts';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import { JAVA_VERSIONS } from '../server/versions/java.ts';
import { withdrawalOf } from '../server/versions/update-check.ts';
import {
  buildApi,
  findProgram,
  freePort,
  makeWorkspace,
  ROOT,
  runBuildCommand,
  startNginx,
  startTestOrigin,
  type NginxServer,
  type Workspace,
} from './helpers.ts';

// Issue 29 over HTTP: the demo data with three versions withdrawn (records written as the CLI
// writes them), served by a real origin and by the build's nginx.conf in front of it, against the
// same data with those three versions removed: every latest, resolve and update-check answer must
// be the one SPEC 2.4 gives for the versions that are not withdrawn.

const NGINX = findProgram('nginx');
if (!NGINX) console.warn('withdrawn-http.test.ts: nginx not installed, the nginx half not run');

/** The demo versions withdrawn here, and the ones their users move to. */
const DEMO = {
  /** 1.4.0 Java 17, PaperMC+Purpur: the latest of both on Java 17 and 21 (Java 21 servers run Java 17 builds). */
  paper: 'plugin-1789470000000-7f26410443',
  /** 1.2.0 Java 17, PaperMC+Folia+Purpur: the newest release left on Java 17. */
  paperSuccessor: 'plugin-1774080000000-767405b112',
  /** 1.3.0 Java 21, PaperMC+Folia+Purpur: Folia's newest a Java 21 server runs. */
  paperAnyJava: 'plugin-1780412400000-b878942086',
  /** 2.0.0 Java 25, PaperMC+Folia+Purpur, Minecraft 26.1: PaperMC's latest on any Java (issue 39). */
  paper26: 'plugin-1795514400000-cd8206ff60',
  /** 1.3.0 Java 21, CanvasMC's only version: nothing to move to. */
  canvas: 'plugin-1780413900000-a53d5a0a9e',
  /** 1.5.0-beta.1 Java 21, LeafMC, beta. */
  leafBeta: 'plugin-1793385900000-fbf68fcdf0',
  /** 1.3.0 Java 21, Quilt+LeafMC, release: what the beta channel falls back to. */
  leafRelease: 'plugin-1780413600000-af86d0a868',
};
const WITHDRAWALS = {
  [DEMO.paper]: { reason: 'Corrupts worlds on 1.21.4 (see #88)', at: '2026-11-02T10:15:30.250Z', by: 'alice' },
  [DEMO.canvas]: { reason: 'Crashes CanvasMC on start', at: '2026-11-03T08:00:00.000Z', by: 'alice' },
  [DEMO.leafBeta]: { reason: 'Beta deletes configs', at: '2026-11-04T12:00:00.999Z', by: 'bob' },
};
const WITHDRAWN_IDS = Object.keys(WITHDRAWALS);

const ctx = {} as {
  withdrawn: Workspace;
  without: Workspace;
  origin: RunningOrigin;
  reference: RunningOrigin;
  nginx: NginxServer | undefined;
  manifest: Manifest;
  treeDir: string;
  records: Map<string, PluginVersionRecord>;
  ready: Promise<void> | undefined;
};

const recordFile = (dataDir: string, id: string) => join(dataDir, 'versions', `${id}.json`);

async function start() {
  ctx.withdrawn = await makeWorkspace({ build: false });
  ctx.without = await makeWorkspace({ build: false });
  ctx.records = new Map();
  for (const [id, withdrawn] of Object.entries(WITHDRAWALS)) {
    const record = JSON.parse(await readFile(recordFile(ctx.withdrawn.dataDir, id), 'utf8')) as PluginVersionRecord;
    ctx.records.set(id, record);
    await writeFile(recordFile(ctx.withdrawn.dataDir, id), JSON.stringify({ ...record, withdrawn }, null, 2));
    // The reference: the same data without the version at all.
    for (const file of [recordFile(ctx.without.dataDir, id), join(ctx.without.dataDir, 'versions', `${id}.md`)])
      await rm(file, { force: true });
    await rm(join(ctx.without.dataDir, 'jars', `${id}.jar`));
  }
  const [originPort, nginxPort] = [await freePort(), await freePort()];
  const built = await runBuildCommand(ctx.withdrawn, {
    NGINX_ORIGINS: `127.0.0.1:${originPort}`,
    NGINX_LISTEN: `127.0.0.1:${nginxPort}`,
    RATE_LIMIT: '100000/15m', // nginx's limit: this file asks a few thousand answers
  });
  assert.is(built.code, 0, built.stderr);
  await buildApi(ctx.without);
  ctx.origin = await startTestOrigin(ctx.withdrawn, { port: originPort, rateLimit: null });
  ctx.reference = await startTestOrigin(ctx.without, { rateLimit: null });
  ctx.treeDir = (await currentTreeDir(ctx.withdrawn.distDir))!;
  ctx.manifest = Manifest.parse(JSON.parse(await readFile(join(ctx.treeDir, 'manifest.json'), 'utf8')));
  ctx.nginx = NGINX ? await startNginx(NGINX, join(ctx.treeDir, 'nginx.conf'), nginxPort) : undefined;
}
const setup = () => (ctx.ready ??= start());
async function teardown() {
  await ctx.nginx?.stop();
  await ctx.origin?.close();
  await ctx.reference?.close();
  await ctx.withdrawn?.remove();
  await ctx.without?.remove();
}

type Shown = { id: string; pluginVersion: string; isLatest: Record<string, boolean>; withdrawn?: unknown };
type Answer = { status: number; headers: Headers; body: Buffer };

async function get(base: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(base + path, { ...init, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}
const json = <T>(answer: Answer) => JSON.parse(answer.body.toString('utf8')) as T;
const withChannels = (path: string) => [path, ...CHANNELS.map((channel) => `${path}?channel=${channel}`)];

const shown = suite('a withdrawn version stays listed and at its own URL');
shown.before(setup);

shown('the list and the answer by id carry withdrawn {reason, at, by}, and every isLatest false', async () => {
  const list = json<{ versions: Shown[] }>(await get(ctx.origin.url, '/api/plugin-versions'));
  assert.is(list.versions.length, 15, 'every demo version, the withdrawn ones too');
  for (const version of list.versions) {
    const own = await get(ctx.origin.url, versionPath(version.id));
    assert.is(own.status, 200, version.id);
    assert.equal(json<{ version: Shown }>(own).version, version, `${version.id}: the list's object`);
    if (!WITHDRAWN_IDS.includes(version.id)) {
      assert.not.ok('withdrawn' in version, `${version.id}: no withdrawn field`);
      continue;
    }
    assert.equal(version.withdrawn, WITHDRAWALS[version.id], version.id);
    assert.ok(Object.keys(version.isLatest).length > 0);
    assert.ok(
      Object.values(version.isLatest).every((latest) => latest === false),
      `${version.id}: ${JSON.stringify(version.isLatest)}`,
    );
  }
  const paper = list.versions.find((v) => v.id === DEMO.paperAnyJava)!;
  assert.equal(paper.isLatest, { PaperMC: true, Folia: true, Purpur: true }, 'the next PaperMC release is latest');
});
shown.run();

const next = suite('latest, download-latest, resolve and download-resolve answer the next qualifying version');
next.before(setup);

/** Every software's latest and resolve paths, with and without a Java version, in each channel form. */
function pickingPaths(): string[] {
  const paths: string[] = [];
  for (const software of SERVER_SOFTWARE.map((name) => name.toLowerCase()))
    for (const java of [undefined, ...JAVA_VERSIONS])
      for (const path of [
        latestPath('latest', software, java),
        latestPath('download/latest', software, java),
        resolvePath('resolve', software, java),
        resolvePath('download/resolve', software, java),
      ])
        paths.push(...withChannels(path));
  return paths;
}

next('on every software, Java version and channel: as if the withdrawn versions did not exist', async () => {
  const paths = pickingPaths();
  assert.is(paths.length, SERVER_SOFTWARE.length * (1 + JAVA_VERSIONS.length) * 4 * 4);
  for (const path of paths) {
    const [answer, expected] = [await get(ctx.origin.url, path), await get(ctx.reference.url, path)];
    assert.is(answer.status, expected.status, `${path}: status`);
    assert.ok(answer.body.equals(expected.body), `${path}: body`);
    assert.is(answer.headers.get('content-location'), expected.headers.get('content-location'), path);
    for (const id of WITHDRAWN_IDS) {
      assert.not.ok(answer.body.includes(id), `${path}: never ${id}`);
      assert.not.ok(answer.headers.get('content-location')?.includes(id), `${path}: never ${id}'s JAR`);
    }
    // A JAR answered by latest or resolve is never a withdrawn one: it never says so.
    assert.is(answer.headers.get('deprecation'), null, path);
    assert.is(answer.headers.get('link'), null, path);
  }
});

next('the version each withdrawal hands over to, and SPEC 404 where none qualifies', async () => {
  const picked = async (path: string) => json<{ version: Shown }>(await get(ctx.origin.url, path)).version.id;
  assert.is(await picked('/api/plugin-versions/latest/papermc'), DEMO.paper26);
  assert.is(await picked('/api/plugin-versions/latest/papermc/17'), DEMO.paperSuccessor);
  assert.is(await picked('/api/plugin-versions/latest/purpur/17?channel=alpha'), DEMO.paperSuccessor);
  assert.is(await picked('/api/plugin-versions/resolve/purpur/17'), DEMO.paperSuccessor);
  assert.is(await picked('/api/plugin-versions/latest/leafmc?channel=beta'), DEMO.leafRelease);
  assert.is(await picked('/api/plugin-versions/resolve/leafmc/21?channel=alpha'), DEMO.leafRelease);
  const jar = await get(ctx.origin.url, '/api/plugin-versions/download/latest/papermc/17');
  assert.is(jar.headers.get('content-location'), downloadPath(DEMO.paperSuccessor));
  for (const path of withChannels('/api/plugin-versions/latest/canvasmc')) {
    const answer = await get(ctx.origin.url, path);
    assert.is(answer.status, 404, path);
    assert.match(json<{ error: string }>(answer).error, /^No plugin version found for CanvasMC/);
  }
  for (const path of withChannels('/api/plugin-versions/download/latest/canvasmc/21'))
    assert.is((await get(ctx.origin.url, path)).status, 404, path);
  // CanvasMC runs Folia's builds: resolution falls back to Folia's newest.
  assert.is(await picked('/api/plugin-versions/resolve/canvasmc/21'), DEMO.paperAnyJava);
});
next.run();

const check = suite('the update check of a server running a withdrawn version');
check.before(setup);

/**
 * Issue 31's rules for which builds a server runs, stated here from the issue and docs/api.md
 * rather than read from server/versions/compat.ts: a server runs a build when one of the build's
 * softwares is in its chain (its own, then those it is built on), or, on Folia and CanvasMC, when
 * the build declares `folia-supported: true`; and the build's Java is at most the server's (Java is
 * a minimum). Paper's hard fork only reorders the chain, it removes nothing from it.
 */
const CHAIN: Record<string, readonly string[]> = {
  PaperMC: ['PaperMC', 'Spigot', 'Bukkit', 'Folia'],
  Spigot: ['Spigot', 'Bukkit'],
  Bukkit: ['Bukkit'],
  Purpur: ['Purpur', 'PaperMC', 'Spigot', 'Bukkit', 'Folia'],
  Quilt: ['Quilt'],
  LeafMC: ['LeafMC', 'PaperMC', 'Purpur', 'Spigot', 'Bukkit', 'Folia'],
  Folia: ['Folia'],
  CanvasMC: ['CanvasMC', 'Folia'],
  BungeeCord: ['BungeeCord'],
  Waterfall: ['Waterfall', 'BungeeCord'],
  Velocity: ['Velocity'],
};
const runsBuild = (software: string, java: string, build: PluginVersionRecord) =>
  Number(build.javaVersion) <= Number(java) &&
  (build.serverSoftware.some((name) => CHAIN[software]!.includes(name)) ||
    (['Folia', 'CanvasMC'].includes(software) && build.foliaSupported === true));

/**
 * Issue 29 under those rules: the server runs a withdrawn `current` when every build of it that
 * the server runs was withdrawn (the newest one's reason); undefined when one stands or none runs.
 */
function withdrawnFor(all: readonly PluginVersionRecord[], software: string, java: string, current: string) {
  const builds = all
    .filter((v) => v.pluginVersion === current && runsBuild(software, java, v))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  if (builds.length === 0 || builds.some((v) => !v.withdrawn)) return undefined;
  return { reason: builds[0]!.withdrawn!.reason };
}

/** Every software's update check, on every Java version, of each demo plugin version, in each channel form. */
function updateCheckPaths(records: readonly PluginVersionRecord[]) {
  const paths: { path: string; software: string; java: string; current: string }[] = [];
  for (const current of new Set(records.map((v) => v.pluginVersion)))
    for (const software of SERVER_SOFTWARE)
      for (const java of JAVA_VERSIONS)
        for (const path of withChannels(updateCheckPath(software.toLowerCase(), java, current)))
          paths.push({ path, software, java, current });
  return paths;
}

check('adds withdrawn {reason} and moveTo to the answer it would give; the same answer otherwise', async () => {
  const all = json<{ versions: PluginVersionRecord[] }>(await get(ctx.origin.url, '/api/plugin-versions')).versions;
  const paths = updateCheckPaths(all);
  assert.is(paths.length, 8 * SERVER_SOFTWARE.length * JAVA_VERSIONS.length * 4, 'eight demo plugin versions');
  let flagged = 0;
  for (const { path, software, java, current } of paths) {
    const [answer, expected] = [await get(ctx.origin.url, path), await get(ctx.reference.url, path)];
    assert.is(answer.status, expected.status, `${path}: status`);
    const withdrawn = withdrawnFor(all, software, java, current);
    if (!withdrawn || expected.status !== 200) {
      assert.ok(answer.body.equals(expected.body), `${path}: the same bytes`);
      continue;
    }
    const before = json<{ latest: Shown }>(expected);
    assert.equal(json(answer), { ...before, withdrawn, moveTo: before.latest }, path);
    flagged++;
  }
  // 1.4.0 (Java 17; PaperMC, Purpur, folia-supported) on PaperMC, Purpur, LeafMC, Folia and
  // CanvasMC at Java 17, 21 and 25, and LeafMC's beta at Java 21 and 25, in four channel forms each.
  // CanvasMC's withdrawn 1.3.0 is not: CanvasMC runs Folia's 1.3.0, which stands.
  assert.is(flagged, 17 * 4);
});

check('1.4.0 on PaperMC, Java 17: ahead of the latest, told why and to move back to 1.2.0', async () => {
  const answer = json<Record<string, unknown> & { latest: Shown; moveTo: Shown }>(
    await get(ctx.origin.url, '/api/plugin-versions/update-check/papermc/17/1.4.0'),
  );
  assert.is(answer.status, 'ahead');
  assert.is(answer.behind, 0);
  assert.equal(answer.withdrawn, { reason: WITHDRAWALS[DEMO.paper]!.reason });
  assert.is(answer.moveTo.id, DEMO.paperSuccessor);
  assert.equal(answer.moveTo, answer.latest);
  // Issue 31: Java is a minimum, so a Java 21 server runs the Java 17 1.4.0 too: withdrawn there as well.
  const java21 = json<Record<string, unknown>>(
    await get(ctx.origin.url, '/api/plugin-versions/update-check/papermc/21/1.4.0'),
  );
  assert.equal(java21.withdrawn, { reason: WITHDRAWALS[DEMO.paper]!.reason });
  const beta = json<Record<string, unknown> & { moveTo: Shown }>(
    await get(ctx.origin.url, '/api/plugin-versions/update-check/leafmc/21/1.5.0-beta.1?channel=beta'),
  );
  assert.equal(beta.withdrawn, { reason: WITHDRAWALS[DEMO.leafBeta]!.reason });
  assert.is(beta.moveTo.id, DEMO.leafRelease);
  // Issue 31: CanvasMC runs Folia's builds, as resolve does: its 1.3.0 still stands there.
  const canvas = json<Record<string, unknown> & { latest: Shown }>(
    await get(ctx.origin.url, '/api/plugin-versions/update-check/canvasmc/21/1.3.0'),
  );
  assert.is(canvas.latest.id, DEMO.paperAnyJava);
  assert.not.ok('withdrawn' in canvas);
});

check('a version with another build of the same plugin version still standing is not withdrawn', () => {
  const record = ctx.records.get(DEMO.paper)!;
  const withdrawn = { ...record, withdrawn: WITHDRAWALS[DEMO.paper]! };
  const rebuilt = { ...record, id: 'plugin-1789470000001-abcdef', createdAt: '2026-09-15T11:00:00.001Z' };
  const question = { software: 'PaperMC', java: '17', current: '1.4.0' } as const;
  assert.equal(withdrawalOf([withdrawn], question), { reason: WITHDRAWALS[DEMO.paper]!.reason });
  assert.is(withdrawalOf([rebuilt, withdrawn], question), undefined);
  assert.is(withdrawalOf([withdrawn], { ...question, current: '1.4.1' }), undefined);
});
check.run();

const download = suite("a withdrawn version's download by id: the JAR, with Deprecation and a successor Link");
download.before(setup);
download.after(teardown);

/** What each download by id must carry: [id, Deprecation, Link] (null: absent). */
function expectedHeaders(): [string, string | null, string | null][] {
  const seconds = (id: string) => `@${Math.floor(Date.parse(WITHDRAWALS[id]!.at) / 1000)}`;
  const successor = (id: string) => `<${downloadPath(id)}>; rel="successor-version"`;
  return [
    [DEMO.paper, seconds(DEMO.paper), successor(DEMO.paperSuccessor)],
    [DEMO.leafBeta, seconds(DEMO.leafBeta), successor(DEMO.leafRelease)],
    [DEMO.canvas, seconds(DEMO.canvas), null],
    [DEMO.paperSuccessor, null, null],
  ];
}

download('the origin: 200 with the JAR, Deprecation at the withdrawal second, Link when one exists', async () => {
  assert.is(expectedHeaders()[0]![1], '@1793614530', 'RFC 9745: @ and whole seconds, milliseconds dropped');
  for (const [id, deprecation, link] of expectedHeaders()) {
    const jar = await readFile(join(ctx.withdrawn.dataDir, 'jars', `${id}.jar`));
    for (const method of ['GET', 'HEAD']) {
      const answer = await get(ctx.origin.url, downloadPath(id), { method });
      assert.is(answer.status, 200, `${method} ${id}`);
      if (method === 'GET') assert.ok(answer.body.equals(jar), `${id}: the JAR`);
      assert.is(answer.headers.get('deprecation'), deprecation, `${method} ${id}: Deprecation`);
      assert.is(answer.headers.get('link'), link, `${method} ${id}: Link`);
      const exposed = answer.headers.get('access-control-expose-headers')!.split(', ');
      assert.is(exposed.includes('Deprecation') && exposed.includes('Link'), deprecation !== null, `${id}: exposed`);
      assert.ok(exposed.includes('Repr-Digest'), 'the digests stay exposed');
      assert.is(
        answer.headers.get('cache-control'),
        deprecation ? 'public, max-age=60' : 'public, max-age=31536000, immutable',
        `${id}: a withdrawn version's answer follows its successor`,
      );
    }
  }
});

download('precomputed: the manifest holds them, and nginx sends them as the origin does', async () => {
  // A static host cannot carry them: export-static's _headers has one rule per endpoint, and only
  // withdrawn versions' downloads have them (and a shorter Cache-Control). They are listed as not
  // carried, in the export and in docs/deployment.md; nginx and the origin send them.
  const { headers: headersFile, notCarried } = staticLayoutConfigs(ctx.manifest.routes, 'http://localhost:3000');
  assert.not.match(headersFile, /^\s+(deprecation|link):/im, 'no rule gives every download a withdrawal');
  const missing = notCarried.get('/api/plugin-versions/download/{id}');
  assert.ok(missing?.has('deprecation') && missing.has('link'), 'listed as not carried');
  const documented = await readFile(join(ROOT, 'docs/deployment.md'), 'utf8').then((text) => text.replace(/\s+/g, ' '));
  assert.match(documented, /a withdrawn version's Deprecation and Link/, 'docs/deployment.md lists them');
  for (const [id, deprecation, link] of expectedHeaders()) {
    const path = downloadPath(id);
    const entry = ctx.manifest.routes[path]!;
    assert.is(entry.headers.deprecation, deprecation ?? undefined, `${path}: manifest`);
    assert.is(entry.headers.link, link ?? undefined, `${path}: manifest`);
    if (!ctx.nginx) continue;
    const [viaNginx, fromOrigin] = [await get(ctx.nginx.url, path), await get(ctx.origin.url, path)];
    assert.is(viaNginx.status, 200, path);
    assert.ok(viaNginx.body.equals(fromOrigin.body), `${path}: the JAR through nginx`);
    for (const name of ['deprecation', 'link', 'access-control-expose-headers', 'cache-control', 'etag'])
      assert.is(viaNginx.headers.get(name), fromOrigin.headers.get(name), `${path}: ${name} through nginx`);
  }
  if (ctx.nginx) assert.not.match(await ctx.nginx.errors(), /\[(emerg|alert|crit)\]/);
});
download.run();
