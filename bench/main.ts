// npm run bench [-- --rounds 3 --seconds 5 --only serving|build|release|publish|brands|charts|counting|scale|growth] [--versions 100,1000,10000]
// (--versions: the growth bench's counts, default 100,1000,10000, up to 1,000,000 with --only growth, sizes above
// --measure-up-to (default 10000) extrapolated; the release bench's large workspaces, default 1000)
// Each figure is printed beside a baseline measured in the same run, as a ratio: these machines are
// noisy, so only same-run ratios compare. Medians over the rounds.
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runBuild } from '../build/build.ts';
import { downloadPath } from '../server/versions/paths.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { ROOT, findProgram, startProcess } from '../test/processes.ts';
import { writeNginxConfig } from './nginx.ts';
import { benchBrands } from './brands.ts';
import { benchCharts } from './charts.ts';
import { benchCounting } from './counting.ts';
import { WRK, buildWithBigJar, fmt, load, measureCpu, median, pluginJar, report, type CpuFigures } from './harness.ts';
import { benchScale } from './scale.ts';
import { writeLargeData } from './large-data.ts';
import { benchGrowth } from './growth.ts';
import { benchIngestion } from './ingestion.ts';
import { measureNginx } from './nginx-growth.ts';
import { treeStaticRuleCounts } from '../build/static-layout-configs.ts';
import { lifecycleToServed, timeUntilServed } from './lifecycle.ts';
import { addPublishToken, publishToServed } from './publish.ts';
import { DEPOT, answersRelease, timeCommand } from './depot-commands.ts';
import { benchClassHeaders } from './class-files.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    only: { type: 'string' },
    versions: { type: 'string' },
    'measure-up-to': { type: 'string' },
  },
});
const ROUNDS = Math.min(Math.max(Number(values.rounds), 1), 10);
const SECONDS = Math.min(Math.max(Number(values.seconds), 1), 30);
const TSX = ['--import', 'tsx'];
/** The growth bench plans for 100,000 versions and more (measured or extrapolated); the others build every size. */
const MAX_VERSIONS = values.only === 'growth' ? 1_000_000 : 20_000;
const VERSIONS = (values.versions ?? '100,1000,10000')
  .split(',')
  .map((n) => Math.min(Math.max(Number(n) || 100, 1), MAX_VERSIONS));
/** The growth bench builds sizes up to this many versions and extrapolates the larger ones. */
const MEASURE_UP_TO = Math.min(Math.max(Number(values['measure-up-to'] ?? 10_000) || 10_000, 1), MAX_VERSIONS);
/** The release bench's large workspaces: `--versions` when given, else 1,000 versions. */
const RELEASE_SIZES = values.versions === undefined ? [1000] : VERSIONS;
/** Above this many versions the release bench builds without the site: with it, each command's full build takes over a minute there, after its change is served. */
const RELEASE_SITE_UP_TO = 1000;

async function makeWorkspace(name: string) {
  const dir = join(work, name);
  await cp(join(ROOT, 'data'), join(dir, 'data'), { recursive: true });
  return { dataDir: join(dir, 'data'), distDir: join(dir, 'dist'), dir };
}

/** Metadata requests per CPU-time measurement: about 2 s of the origin's CPU time, 200 of Linux's 10 ms ticks. */
const CPU_REQUESTS = 20_000;

/**
 * SPEC 8's limiter on (port 4105) against RATE_LIMIT=0 (port 4106), both without request log: the
 * origin's own CPU time per metadata answer over CPU_REQUESTS requests. Both origins are loaded at
 * the same time, so that whatever else the 2 cores do falls on both alike: measured one after the
 * other, the ratio ranged from 1.15 to 1.53 for the same code. Requests/s of the same runs
 * (autocannon, in this process) are printed too.
 */
async function benchRateLimit(onPid: number, offPid: number, path: string) {
  const runs = {
    on: { pid: onPid, url: `http://127.0.0.1:4105${path}` },
    off: { pid: offPid, url: `http://127.0.0.1:4106${path}` },
  };
  const measureBoth = (count: number) =>
    Promise.all([runs.on, runs.off].map((run) => measureCpu(run.pid, run.url, 16, count)));
  await measureBoth(CPU_REQUESTS / 4);
  const figures = { on: [] as CpuFigures[], off: [] as CpuFigures[] };
  // At least 5 rounds: each takes about 3 s.
  for (let round = 0; round < Math.max(ROUNDS, 5); round++) {
    const [on, off] = await measureBoth(CPU_REQUESTS);
    figures.on.push(on!);
    figures.off.push(off!);
  }
  const cpu = (side: 'on' | 'off') => median(figures[side].map((f) => f.cpuMicrosPerRequest));
  const rps = (side: 'on' | 'off') => median(figures[side].map((f) => f.requestsPerSecond));
  report('metadata: rate limit on, CPU time', cpu('on'), 'µs/req', 'off (RATE_LIMIT=0)', cpu('off'), '<= 1.10');
  report('metadata: rate limit on', rps('on'), 'req/s', 'off, same runs', rps('off'));
  const cost = cpu('on') - cpu('off');
  console.log(
    `${''.padEnd(34)} the limiter costs ${fmt(cost)} µs per answer, ${((cost / cpu('off')) * 100).toFixed(1)}% of its CPU time (target: at most 10%)`,
  );
}

async function benchServing() {
  console.log(
    `\n# Serving (${WRK ? 'wrk' : 'autocannon (apt-get install -y wrk for a lighter client)'}, ${SECONDS} s per run, ${ROUNDS} rounds, one server process each)`,
  );
  const ws = await makeWorkspace('serving');
  const big = await buildWithBigJar(ws);
  const tree = await openTree((await currentTreeDir(ws.distDir))!);
  const paths = { metadata: '/api/plugin-versions/latest/papermc', jar: downloadPath(big) };

  const servers: { name: string; base: string; stop: () => Promise<void> }[] = [];
  try {
    const origin = await startProcess(
      process.execPath,
      [...TSX, 'server/main.ts'],
      `http://127.0.0.1:4101${paths.metadata}`,
      {
        PORT: '4101',
        HOST: '127.0.0.1',
        RATE_LIMIT: '0',
        DIST_DIR: ws.distDir,
        DATA_DIR: ws.dataDir,
      },
    );
    servers.push({ name: 'origin', base: 'http://127.0.0.1:4101', stop: origin.stop });
    // The same origin without its request log (LOG_REQUESTS=off), as behind a CDN that keeps one.
    const quiet = await startProcess(
      process.execPath,
      [...TSX, 'server/main.ts'],
      `http://127.0.0.1:4106${paths.metadata}`,
      {
        PORT: '4106',
        HOST: '127.0.0.1',
        RATE_LIMIT: '0',
        LOG_REQUESTS: 'off',
        DIST_DIR: ws.distDir,
        DATA_DIR: ws.dataDir,
      },
    );
    servers.push({ name: 'origin, no request log', base: 'http://127.0.0.1:4106', stop: quiet.stop });
    // The same origin with SPEC 8's limiter counting every request (a limit no run reaches), no
    // request log either: beside the origin above, the limiter is the only difference.
    const limited = await startProcess(
      process.execPath,
      [...TSX, 'server/main.ts'],
      `http://127.0.0.1:4105${paths.metadata}`,
      {
        PORT: '4105',
        HOST: '127.0.0.1',
        RATE_LIMIT: '9999999/1h',
        LOG_REQUESTS: 'off',
        DIST_DIR: ws.distDir,
        DATA_DIR: ws.dataDir,
      },
    );
    servers.push({ name: 'origin, rate limit on', base: 'http://127.0.0.1:4105', stop: limited.stop });
    const node = await startProcess(
      process.execPath,
      [...TSX, 'bench/node-baseline.ts', tree.dir, '4102', paths.metadata, paths.jar],
      `http://127.0.0.1:4102${paths.metadata}`,
    );
    servers.push({ name: 'node:http in memory', base: 'http://127.0.0.1:4102', stop: node.stop });
    const nginxBin = findProgram('nginx');
    if (nginxBin) {
      const conf = await writeNginxConfig(join(ws.dir, 'nginx'), tree, Object.values(paths), 4103);
      const nginx = await startProcess(
        nginxBin,
        ['-c', conf, '-g', 'daemon off;'],
        `http://127.0.0.1:4103${paths.metadata}`,
      );
      servers.push({ name: 'nginx', base: 'http://127.0.0.1:4103', stop: nginx.stop });
    } else {
      console.log("nginx not found: install Debian's nginx (apt-get install -y nginx) for the nginx baseline");
    }
    for (const [kind, path, connections] of [
      ['metadata', paths.metadata, 32],
      ['5 MB JAR', paths.jar, 8],
    ] as const) {
      const rps = new Map<string, number[]>(servers.map((s) => [s.name, []]));
      // Warm every server up first (JIT, file caches), so round one measures the same thing as the rest.
      // The limiter's metadata figure is measured as CPU time below (benchRateLimit), not here.
      const loaded = kind === 'metadata' ? servers.filter((s) => s.name !== 'origin, rate limit on') : servers;
      for (const server of loaded) await load(server.base + path, connections, 2);
      for (let round = 0; round < ROUNDS; round++) {
        for (const server of loaded) rps.get(server.name)!.push(await load(server.base + path, connections, SECONDS));
      }
      const med = (name: string) => median(rps.get(name) ?? [NaN]);
      report(
        `${kind}: origin, no request log`,
        med('origin, no request log'),
        'req/s',
        'node:http in memory',
        med('node:http in memory'),
        kind === 'metadata' ? '>= 0.80' : undefined,
      );
      report(
        `${kind}: origin (request log on)`,
        med('origin'),
        'req/s',
        'request log off',
        med('origin, no request log'),
      );
      if (kind !== 'metadata')
        report(
          `${kind}: rate limit on`,
          med('origin, rate limit on'),
          'req/s',
          'rate limit off (RATE_LIMIT=0)',
          med('origin, no request log'),
          '>= 0.90',
        );
      if (nginxBin)
        report(
          `${kind}: origin`,
          med('origin'),
          'req/s',
          'nginx',
          med('nginx'),
          kind === 'metadata' ? undefined : '>= 0.85',
        );
    }
    await benchRateLimit(limited.child.pid!, quiet.child.pid!, paths.metadata);
  } finally {
    for (const server of servers) await server.stop();
  }
}

async function benchBuild() {
  console.log(`\n# Build (${ROUNDS} rounds)`);
  const builds: number[] = [];
  const copies: number[] = [];
  const sizes = { demo: join(ROOT, 'data'), large: join(work, 'large/data') };
  await writeLargeData(sizes.large, 1000);
  // Brand images rendered by an earlier build are reused, as on an operator's machine: the first
  // build, which renders them all, is timed on its own. The site is built anew each time (its
  // cache is emptied) so its cost shows, beside the same build with SITE=off.
  const cacheDir = join(work, 'build-cache');
  let run = 0;
  const build = async (dataDir: string, site: 'on' | 'off') => {
    await rm(join(cacheDir, 'site'), { recursive: true, force: true });
    return timeCommand(process.execPath, [...TSX, 'build/main.ts'], {
      DATA_DIR: dataDir,
      DIST_DIR: join(work, `dist-${run++}`),
      BUILD_CACHE_DIR: cacheDir,
      SITE: site,
    });
  };
  const first = await build(sizes.large, 'off');
  const times = {
    demo: { on: [] as number[], off: [] as number[] },
    large: { on: [] as number[], off: [] as number[] },
  };
  for (let round = 0; round < ROUNDS; round++) {
    for (const size of ['demo', 'large'] as const)
      for (const site of ['on', 'off'] as const) times[size][site].push(await build(sizes[size], site));
    copies.push(await timeCommand('cp', ['-r', sizes.large, join(work, `large/copy-${round}`)]));
  }
  builds.push(...times.large.on);
  report('full build, 1,000 versions', median(builds), 'ms', 'cp -r data/ (I/O floor)', median(copies), '< 10000 ms');
  for (const size of ['demo', 'large'] as const) {
    const [on, off] = [median(times[size].on), median(times[size].off)];
    report(`build with site, ${size === 'demo' ? 'demo data' : '1,000 versions'}`, on, 'ms', 'SITE=off', off);
    console.log(`${''.padEnd(34)} the site adds ${fmt(on - off)} ms (target: a few seconds)`);
  }
  report('first build (renders all images)', first, 'ms', 'cp -r data/ (I/O floor)', median(copies));
}

/** A workspace the release bench releases into; `site: false` runs every command with SITE=off. */
type ReleaseWorkspace = { dataDir: string; distDir: string; dir: string; cacheDir?: string; site?: boolean };

/**
 * From `depot release` (a new process, as an operator runs it) until the origin following
 * dist/current answers the new version: its metadata and its download. `rounds` releases of
 * `3.<label>.<round>`; returns the times in ms. Each command is awaited (its full build) before the
 * next. With `lifecycle`, each release is then withdrawn, restored and moved to beta (issue 29),
 * each timed the same way until the origin serves it (bench/lifecycle.ts). With `publish`, a JAR is
 * then published over HTTP (issue 30), timed until its 201 (bench/publish.ts).
 */
async function releaseToServed(
  ws: ReleaseWorkspace,
  label: number,
  rounds: number,
  also: { lifecycle?: boolean; publish?: boolean } = {},
) {
  const port = 4104;
  const base = `http://127.0.0.1:${port}`;
  const path = '/api/plugin-versions/latest/papermc/21';
  // The CLI's and the origin's: a publish runs the same CLI, from the origin, with its environment.
  const depotEnv = {
    DATA_DIR: ws.dataDir,
    DIST_DIR: ws.distDir,
    // The audit log of every change and the publishing token go to the workspace, not the checkout's .storage.
    STORAGE_DIR: join(ws.dir, 'storage'),
    ...(ws.cacheDir ? { BUILD_CACHE_DIR: ws.cacheDir } : {}),
    ...(ws.site === false ? { SITE: 'off' } : {}),
  };
  const token = also.publish ? await addPublishToken(depotEnv) : '';
  const origin = await startProcess(process.execPath, [...TSX, 'server/main.ts'], base + path, {
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMIT: '0',
    LOG_REQUESTS: 'off',
    ...depotEnv,
  });
  const runDepot = (args: string[]) => timeCommand(process.execPath, [...DEPOT, ...args], depotEnv);
  const times = {
    ...{ release: [] as number[], withdraw: [] as number[], restore: [] as number[], edit: [] as number[] },
    publish: [] as number[],
  };
  try {
    for (let round = 0; round < rounds; round++) {
      const jar = join(ws.dir, `Release-${label}-${round}.jar`);
      const bytes = pluginJar(`release ${label} ${round}`);
      await writeFile(jar, bytes);
      const version = `3.${label}.${round}`;
      const release = ['release', jar, '--version', version, '--java', '21', '--software', 'PaperMC'];
      times.release.push(
        await timeUntilServed(
          () => runDepot(release),
          () => answersRelease(base, path, version, bytes),
        ),
      );
      if (also.lifecycle) {
        const changed = await lifecycleToServed(base, path, runDepot);
        for (const action of ['withdraw', 'restore', 'edit'] as const) times[action].push(changed[action]);
      }
      if (also.publish) {
        const published = { version: `4.${label}.${round}`, bytes: pluginJar(`publish ${label} ${round}`) };
        times.publish.push(await publishToServed({ base, token, distDir: ws.distDir, ...published }));
      }
    }
  } finally {
    await origin.stop();
  }
  return times;
}

/** `depot` with no command: the CLI's bare start-up (node, the launcher's stamp check, the bundle, its config). */
const cliStartup = () => timeCommand(process.execPath, DEPOT, { EXPECT_FAILURE: '1' });

/**
 * Release to served on the demo data and on each size of RELEASE_SIZES, beside the CLI's bare
 * start-up; then withdraw, restore and edit to served (issue 29) and publish over HTTP to served
 * (issue 30), each beside the release of the same workspace and run.
 */
async function benchRelease() {
  console.log(
    `\n# Release, withdraw, restore, edit and publish over HTTP to served (${ROUNDS} rounds, origin following dist/current; SITE=off above ${RELEASE_SITE_UP_TO.toLocaleString('en')} versions)`,
  );
  const startups: number[] = [];
  for (let round = 0; round < ROUNDS; round++) startups.push(await cliStartup());
  const workspaces: [string, ReleaseWorkspace][] = [['demo data', await makeWorkspace('release')]];
  for (const count of RELEASE_SIZES) {
    const dir = join(work, `release-${count}`);
    const ws = { dir, dataDir: join(dir, 'data'), distDir: join(dir, 'dist'), site: count <= RELEASE_SITE_UP_TO };
    await writeLargeData(ws.dataDir, count);
    workspaces.push([`${count.toLocaleString('en')} versions`, ws]);
  }
  for (const [index, [name, ws]] of workspaces.entries()) {
    await runBuild(ws);
    const times = await releaseToServed(ws, index, ROUNDS, { lifecycle: true, publish: true });
    const release = median(times.release);
    report(
      `depot release -> served, ${name} (node build/cli/launch.mjs, no npm)`,
      release,
      'ms',
      'depot CLI start (no-op, no npm)',
      median(startups),
      '< 1000 ms',
    );
    for (const action of ['withdraw', 'restore', 'edit'] as const)
      report(
        `depot ${action} -> served, ${name}`,
        median(times[action]),
        'ms',
        'release, same run',
        release,
        '< 1000 ms',
      );
    // Issue 30: a CI job's POST until its 201, which comes once the origin serves the version.
    report(
      `publish over HTTP -> served, ${name}`,
      median(times.publish),
      'ms',
      'release, same run',
      release,
      '< 1000 ms',
    );
  }
}

const work = await mkdtemp(join(tmpdir(), 'depot-bench-'));
try {
  const only = values.only;
  if (!only || only === 'serving') await benchServing();
  if (!only || only === 'build') await benchBuild();
  if (!only || only === 'release') benchClassHeaders(ROUNDS);
  // Publishing over HTTP is timed beside `depot release` of the same run, its baseline: one bench.
  if (!only || only === 'release' || only === 'publish') await benchRelease();
  // Not part of a plain `npm run bench`: 10,000 versions take minutes to write and build.
  if (only === 'growth') {
    const hooks = {
      ...(findProgram('nginx') && { measureNginx }),
      staticHostRules: (treeDir: string) => treeStaticRuleCounts(treeDir),
    };
    await benchGrowth(work, VERSIONS, { rounds: ROUNDS, measureUpTo: MEASURE_UP_TO, hooks });
    // Ingestion does not read the catalog: measured once, beside batches of 1,000 (issue 32).
    await benchIngestion(await makeWorkspace('ingestion'), ROUNDS);
  }
  if (!only || only === 'brands') await benchBrands(await makeWorkspace('brands'), ROUNDS);
  if (!only || only === 'charts') await benchCharts(await makeWorkspace('charts'), ROUNDS);
  if (!only || only === 'counting') await benchCounting(await makeWorkspace('counting'), ROUNDS, SECONDS);
  if (!only || only === 'scale') await benchScale(await makeWorkspace('scale'), ROUNDS, SECONDS);
} finally {
  await rm(work, { recursive: true, force: true });
}
