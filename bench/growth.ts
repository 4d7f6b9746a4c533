import { open, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, get } from 'node:http';
import { CURRENT_LINK } from '../server/tree/format.ts';
import { BUILD_RECORD } from '../server/tree/previous.ts';
import { versionPath } from '../server/versions/paths.ts';
import { startProcess } from '../test/processes.ts';
import { DEPOT, answersRelease, timeCommand } from './depot-commands.ts';
import { fmt, median, pluginJar } from './harness.ts';
import { writeLargeData } from './large-data.ts';
import { timeUntilServed } from './lifecycle.ts';
import type { NginxFigures } from './nginx-growth.ts';

const TSX = ['--import', 'tsx'];
/** A full build of 100,000 versions takes many minutes here: a build may run this long. */
const BUILD_TIMEOUT_MS = 60 * 60_000;
/** Requests per metadata latency figure, one connection: each answer's own time, not a queue's. */
const LATENCY_REQUESTS = 2000;
const LATEST_PATH = '/api/plugin-versions/latest/papermc/21';

/**
 * Figures other parts of the depot measure, wired in by whoever owns them: each one a column of
 * the growth table when given, `-` otherwise. `treeDir` is the finished tree of that size.
 */
export type GrowthHooks = {
  /** nginx's cost of the tree's nginx.conf (bench/nginx-growth.ts `measureNginx`). */
  measureNginx?: (treeDir: string) => Promise<NginxFigures>;
  /** The static hosts' rule counts (`_headers`, `_redirects`). */
  staticHostRules?: (treeDir: string) => Promise<{ headers: number; redirects: number }>;
};

type GrowthWorkspace = { dir: string; dataDir: string; distDir: string; cacheDir: string };

/** One size's figures (ms, bytes); undefined where not measured. */
type Row = Record<Column, number | undefined>;
const COLUMNS = {
  buildOff: ['build SITE=off', 'ms'],
  buildOn: ['build with site', 'ms'],
  served: ['release→served', 'ms'],
  finished: ['release→finished tree', 'ms'],
  exit: ['release→exit', 'ms'],
  catalog: ['catalog.json', 'B'],
  manifest: ['manifest.json', 'B'],
  rss: ['origin RSS', 'B'],
  p50Latest: ['p50 latest', 'ms'],
  p50ById: ['p50 by id', 'ms'],
  nginxBytes: ['nginx.conf', 'B'],
  nginxMaps: ['nginx maps', 'B'],
  nginxCheck: ['nginx -t', 'ms'],
  nginxReload: ['nginx reload', 'ms'],
  nginxWorker: ['nginx worker', 'B'],
  headersRules: ['_headers rules', ''],
  redirectRules: ['_redirects rules', ''],
} as const;
type Column = keyof typeof COLUMNS;

/**
 * How the depot grows with data/, per count of versions: a full build without the site and with
 * it (a fresh dist/, brand images from a warm build cache, the site built anew), release to served
 * and release to finished tree (releaseRounds), the tree's catalog.json and manifest.json bytes,
 * the origin's memory once it answers, and the p50 of two metadata answers through it. Counts above
 * `measureUpTo` are not built: each figure is extrapolated from the two largest measured counts,
 * and its cost per version printed.
 */
export async function benchGrowth(
  work: string,
  counts: readonly number[],
  options: { rounds: number; measureUpTo: number; hooks?: GrowthHooks },
) {
  const { rounds, measureUpTo, hooks = {} } = options;
  console.log(
    `\n# Growth (${rounds} rounds per figure; full builds with a warm image cache; measured up to ${measureUpTo.toLocaleString('en')} versions, extrapolated above)`,
  );
  console.log(`  release→finished tree: from spawning \`depot release\` until dist/current names the tree it leaves`);
  console.log(
    `  (checked once it exits: no "delta" in its manifest's head, its site in build.json, the version in its catalog);`,
  );
  console.log(`  release→exit: until the command exits, after the clean-up of files no kept tree names`);
  const cacheDir = join(work, 'growth-cache');
  const measured: [number, Row][] = [];
  for (const count of [...counts].sort((a, b) => a - b)) {
    if (count > measureUpTo) {
      printExtrapolated(count, measured);
      continue;
    }
    const row = await measureSize(work, count, cacheDir, rounds, hooks);
    measured.push([count, row]);
    printRow(count.toLocaleString('en'), row);
  }
}

async function measureSize(work: string, count: number, cacheDir: string, rounds: number, hooks: GrowthHooks) {
  const dir = join(work, `growth-${count}`);
  const dataDir = join(dir, 'data');
  await writeLargeData(dataDir, count);
  let run = 0;
  const build = async (site: 'on' | 'off') => {
    await rm(join(cacheDir, 'site'), { recursive: true, force: true });
    const distDir = join(dir, `dist-${run++}`);
    const env = { DATA_DIR: dataDir, DIST_DIR: distDir, BUILD_CACHE_DIR: cacheDir, SITE: site };
    const ms = await timeCommand(process.execPath, [...TSX, 'build/main.ts'], env, BUILD_TIMEOUT_MS);
    return { ms, distDir };
  };
  // The first build renders the brand images into the cache; the timed ones reuse them.
  await build('off');
  const [off, on] = [[] as number[], [] as number[]];
  let distDir = '';
  for (let round = 0; round < rounds; round++) {
    off.push((await build('off')).ms);
    const withSite = await build('on');
    on.push(withSite.ms);
    if (distDir) await rm(distDir, { recursive: true, force: true });
    distDir = withSite.distDir;
  }
  const ws = { dir, dataDir, distDir, cacheDir };
  const releases = await releaseRounds(ws, count, rounds);
  const treeDir = join(distDir, CURRENT_LINK);
  const nginx = await hooks.measureNginx?.(treeDir);
  const rules = await hooks.staticHostRules?.(treeDir);
  const row: Row = {
    buildOff: median(off),
    buildOn: median(on),
    served: median(releases.served),
    finished: median(releases.finished),
    exit: median(releases.exits),
    catalog: (await stat(join(treeDir, 'catalog.json'))).size,
    manifest: (await stat(join(treeDir, 'manifest.json'))).size,
    rss: releases.rss,
    p50Latest: releases.p50Latest,
    p50ById: releases.p50ById,
    nginxBytes: nginx?.confBytes,
    nginxMaps: nginx?.includedBytes,
    nginxCheck: nginx?.checkMs,
    nginxReload: nginx?.reloadMs,
    nginxWorker: nginx && nginx.workerRssKb * 1024,
    headersRules: rules?.headers,
    redirectRules: rules?.redirects,
  };
  // The size's trees and data/ go: at 100,000 versions they weigh gigabytes.
  await rm(dir, { recursive: true, force: true });
  return row;
}

/**
 * An origin following dist/current (its RSS read once it answers), then `rounds` releases, each
 * timed from its command's start until the origin answers it (served), until dist/current names
 * the tree it leaves (finished: the answers, the pages that read the change and the deploy
 * configs; checked to be that) and until it exits (after the clean-up of unused files), then the p50 of the latest and of a version by id, through the origin.
 */
async function releaseRounds(ws: GrowthWorkspace, label: number, rounds: number) {
  const port = 4107;
  const base = `http://127.0.0.1:${port}`;
  const env = { DATA_DIR: ws.dataDir, DIST_DIR: ws.distDir, BUILD_CACHE_DIR: ws.cacheDir, SITE: 'on' };
  const depotEnv = { ...env, STORAGE_DIR: join(ws.dir, 'storage') };
  const origin = await startProcess(process.execPath, [...TSX, 'server/main.ts'], base + LATEST_PATH, {
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMIT: '0',
    LOG_REQUESTS: 'off',
    ...depotEnv,
  });
  try {
    const rss = await residentBytes(origin.child.pid!);
    const [served, finished, exits] = [[] as number[], [] as number[], [] as number[]];
    for (let round = 0; round < rounds; round++) {
      const jar = join(ws.dir, `Growth-${label}-${round}.jar`);
      const bytes = pluginJar(`growth ${label} ${round}`);
      await writeFile(jar, bytes);
      const version = `5.${round}.${label}`;
      const args = [...DEPOT, 'release', jar, '--version', version, '--java', '21', '--software', 'PaperMC'];
      const started = performance.now();
      let exited = 0;
      const swaps = watchSwaps(ws.distDir);
      const run = () =>
        timeCommand(process.execPath, args, depotEnv, BUILD_TIMEOUT_MS).then(() => (exited = performance.now()));
      served.push(await timeUntilServed(run, () => answersRelease(base, LATEST_PATH, version, bytes)));
      const swapped = swaps.stop();
      // The finished tree is the one dist/current names once the command is done: when it was swapped in.
      const finishedTree = await readlink(join(ws.distDir, CURRENT_LINK));
      finished.push(swapped.get(finishedTree)! - started);
      exits.push(exited - started);
      await checkFinishedTree(ws.distDir, version);
    }
    const anyId = (
      JSON.parse(await readFile(join(ws.distDir, CURRENT_LINK, 'catalog.json'), 'utf8')) as {
        versions: { id: string }[];
      }
    ).versions.at(-1)!.id;
    return {
      rss,
      served,
      finished,
      exits,
      p50Latest: await latencyP50(base + LATEST_PATH),
      p50ById: await latencyP50(base + versionPath(anyId)),
    };
  } finally {
    await origin.stop();
  }
}

/**
 * When dist/current first named each tree, polled every 5 ms until `stop` (the time of a swap to
 * within that, plus a readlink).
 */
function watchSwaps(distDir: string) {
  const seen = new Map<string, number>();
  let stopped = false;
  void (async () => {
    // Bounded by the command it watches (BUILD_TIMEOUT_MS).
    const until = performance.now() + BUILD_TIMEOUT_MS;
    while (!stopped && performance.now() < until) {
      const target = await readlink(join(distDir, CURRENT_LINK)).catch(() => '');
      if (target && !seen.has(target)) seen.set(target, performance.now());
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    stop: () => {
      stopped = true;
      return seen;
    },
  };
}

/**
 * Refuses unless dist/current is the finished tree of a release of `version`: a full tree (its
 * manifest's head, the first line, names no `delta`), whose catalog holds the version and whose
 * build record names its site (the bench builds with the site).
 */
async function checkFinishedTree(distDir: string, version: string) {
  const treeDir = join(distDir, CURRENT_LINK);
  const head = await firstLine(join(treeDir, 'manifest.json'));
  const record = JSON.parse(await readFile(join(treeDir, BUILD_RECORD), 'utf8')) as { site: unknown };
  const catalog = await readFile(join(treeDir, 'catalog.json'), 'utf8');
  if (head.includes('"delta":') || record.site === null || !catalog.includes(`"pluginVersion":"${version}"`))
    throw new Error(`${treeDir}: not the finished tree of ${version} once \`depot release\` exited`);
}

async function firstLine(file: string): Promise<string> {
  const handle = await open(file);
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    return text.slice(0, text.indexOf('\n') + 1 || undefined);
  } finally {
    await handle.close();
  }
}

/** The process's resident memory (VmRSS in /proc/<pid>/status), bytes. */
async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) * 1024;
}

/**
 * The median time of LATENCY_REQUESTS answers of `url`, one after the other on one kept-alive
 * connection, timed to the microsecond: autocannon's latency histogram counts whole milliseconds,
 * and a metadata answer takes less (its p50 read 0).
 */
async function latencyP50(url: string): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  try {
    for (let i = 0; i < LATENCY_REQUESTS; i++) {
      const started = performance.now();
      const status = await new Promise<number>((resolve, reject) =>
        get(url, { agent }, (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0)).on('error', reject);
        }).on('error', reject),
      );
      if (status !== 200) throw new Error(`${url}: ${status}`);
      times.push(performance.now() - started);
    }
  } finally {
    agent.destroy();
  }
  return median(times);
}

const formatFigure = (value: number | undefined, unit: string) =>
  value === undefined ? '-' : unit === 'B' ? `${fmt(value / 1e6)} MB` : `${fmt(value)}${unit ? ` ${unit}` : ''}`;

function printRow(label: string, row: Row) {
  console.log(`\n${label} versions`);
  for (const [column, [name, unit]] of Object.entries(COLUMNS) as [Column, readonly [string, string]][])
    console.log(`  ${name.padEnd(18)} ${formatFigure(row[column], unit).padStart(12)}`);
}

/**
 * A size not built: each figure from the two largest measured sizes, linearly (its cost per
 * version, the slope between them).
 */
function printExtrapolated(count: number, measured: readonly [number, Row][]) {
  console.log(`\n${count.toLocaleString('en')} versions (~ extrapolated: not built here; per version beside each)`);
  const [low, high] = measured.slice(-2);
  // One size alone cannot tell a fixed cost from a cost per version.
  if (!low || !high) return console.log('  needs two measured sizes (--versions with two at most --measure-up-to)');
  for (const [column, [name, unit]] of Object.entries(COLUMNS) as [Column, readonly [string, string]][]) {
    const [lowValue, highValue] = [low[1][column], high[1][column]];
    if (lowValue === undefined || highValue === undefined) {
      console.log(`  ${name.padEnd(18)} ${'-'.padStart(12)}`);
      continue;
    }
    // A figure that fell between the two sizes (noise, or one that does not grow) is taken as flat.
    const perVersion = Math.max(0, (highValue - lowValue) / (high[0] - low[0]));
    const estimate = highValue + perVersion * (count - high[0]);
    const per = unit === 'B' ? `${fmt(perVersion)} B` : `${fmt(perVersion)}${unit ? ` ${unit}` : ''}`;
    console.log(`  ${name.padEnd(18)} ${`~${formatFigure(estimate, unit)}`.padStart(12)}   (${per} per version)`);
  }
}
