// `npm test`: the checks (types, format, unused code) and every test file, on several worker
// processes at once (test/worker.ts: uvu runs each file there), then one summary computed from all
// of them and the slowest files. `npm test -- <pattern>...` runs only the files whose names match
// one of the patterns, and no checks.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { DEPOT_CLI, ROOT, portBlockOf } from './processes.ts';

/** What a worker answers when a file finished. */
const Done = z.object({ file: z.string(), output: z.string(), cpuMs: z.number(), rss: z.number() });

type Outcome = {
  name: string;
  total: number;
  passed: number;
  skipped: number;
  failed: number;
  ms: number;
  /** CPU time of the worker and the processes the file started, while it ran. */
  cpuMs: number;
  output: string;
};

/**
 * A worker that holds more memory than this after a file is replaced before the next: what files
 * leave behind grows its heap, and a big process pays for it in garbage collection and in every
 * child process it starts (fork copies its page tables).
 */
const WORKER_RSS_LIMIT = 1024 * 1024 * 1024;
/** A file still running after this long is killed with its worker, and fails. */
const FILE_TIMEOUT_MS = 10 * 60_000;
const SLOWEST_SHOWN = 15;
/** Each file's time in the last run here: the slowest start first next time. */
const TIMES_FILE = join(ROOT, 'node_modules', '.cache', 'plugin-depot', 'test-times.json');

/** The slowest files' wall times in a run of 4 workers on the 2-core machine (issue 40), in ms. */
const MEASURED_MS: Record<string, number> = {
  'publish-kill.test.ts': 159_000,
  'static-host.test.ts': 135_000,
  'incremental-build.test.ts': 133_000,
  'lifecycle.test.ts': 125_000,
  'entry-points.test.ts': 120_000,
  'publish-http.test.ts': 107_000,
  'older-trees.test.ts': 105_000,
  'launch.test.ts': 98_000,
  'build.test.ts': 83_000,
  'release.test.ts': 79_000,
  'site-admin.test.ts': 78_000,
  'release-java.test.ts': 71_000,
  'descriptor-release.test.ts': 69_000,
  'site-badges.test.ts': 65_000,
  'site-pages.test.ts': 64_000,
};

const patterns = process.argv.slice(2).map((p) => new RegExp(p));
const workers = Number(process.env.TEST_WORKERS ?? availableParallelism() * 2);
if (!Number.isInteger(workers) || workers < 1 || workers > 32) {
  console.error(`TEST_WORKERS must be an integer from 1 to 32, not "${process.env.TEST_WORKERS}"`);
  process.exit(2);
}

const CHECKS: Record<string, string[]> = {
  'tsc --noEmit': ['node_modules/typescript/bin/tsc', '--noEmit'],
  'prettier --check .': ['node_modules/prettier/bin/prettier.cjs', '--check', '--log-level', 'warn', '.'],
  knip: ['node_modules/knip/bin/knip.js', '--no-progress'],
};

const files = (await readdir(join(ROOT, 'test')))
  .filter((name) => name.endsWith('.test.ts'))
  .filter((name) => patterns.length === 0 || patterns.some((p) => p.test(name)));
if (files.length === 0) {
  console.error(`No test file matches ${patterns.map(String).join(' or ')}`);
  process.exit(2);
}

// The slowest files first, so that no long file starts last: by their times in the last run here,
// and in a fresh clone (CI) by the times of a run on the 2-core machine; other files count as 30 s.
const lastTimes = z
  .record(z.string(), z.number())
  .catch({})
  .parse(await readFile(TIMES_FILE, 'utf8').then(JSON.parse, () => ({})));
const timeOf = (name: string) => lastTimes[name] ?? MEASURED_MS[name] ?? 30_000;
files.sort((a, b) => timeOf(b) - timeOf(a));

// One folder for the whole run: what files share (the demo's built trees) is made there once.
const runDir = join(tmpdir(), `depot-test-run-${process.pid}`);
await mkdir(runDir, { recursive: true });

// The CLI the tests run (`npm run depot`) is bundled on its first start: once here, not by several files at once.
await runNode([DEPOT_CLI, 'help']);

console.log(`${files.length} test files on ${workers} workers${patterns.length ? ', no checks' : ', and the checks'}`);
const started = Date.now();
const checksDone = Promise.all(
  patterns.length ? [] : Object.entries(CHECKS).map(([name, args]) => runCheck(name, args)),
);
const queue = [...files];
const outcomes: Outcome[] = [];
await Promise.all(
  Array.from({ length: Math.min(workers, files.length) }, async (_, slot) => {
    let worker: Worker | null = null;
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      // A worker that died between files (a crash of what a file left running) is replaced.
      if (!worker?.alive()) worker = startWorker(slot);
      const run = await worker.run(name);
      if (run.exited) worker = null;
      else if (run.rss > WORKER_RSS_LIMIT) {
        await worker.stop();
        worker = null;
      }
      outcomes.push(outcomeOf(name, run));
    }
    await worker?.stop();
  }),
);
const checks = await checksDone;
await rm(runDir, { recursive: true, force: true });

const sum = (key: 'total' | 'passed' | 'skipped' | 'failed') => outcomes.reduce((n, o) => n + o[key], 0);
const failedChecks = checks.filter((c) => !c.ok);
const failedFiles = outcomes.filter((o) => o.failed > 0);
for (const o of failedFiles) console.log(`\n── ${o.name} failed ──\n${o.output.trimEnd()}`);
for (const c of failedChecks) console.log(`\n── ${c.name} failed ──\n${c.output.trimEnd()}`);

console.log(`\n  Total:     ${sum('total')}`);
console.log(`  Passed:    ${sum('passed')}`);
console.log(`  Skipped:   ${sum('skipped')}`);
console.log(`  Failed:    ${sum('failed')}${failedChecks.length ? `, and ${failedChecks.length} check(s)` : ''}`);
console.log(`  Duration:  ${seconds(Date.now() - started)}, ${files.length} files on ${workers} workers`);
console.log(`  CPU:       ${seconds(outcomes.reduce((n, o) => n + o.cpuMs, 0))} in the files and what they started`);
console.log(`\n  The ${Math.min(SLOWEST_SHOWN, outcomes.length)} slowest files (wall time, CPU time):`);
for (const o of [...outcomes].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST_SHOWN)) {
  console.log(`  ${seconds(o.ms).padStart(8)} ${seconds(o.cpuMs).padStart(8)}  ${o.name} (${o.total} tests)`);
}

await mkdir(join(TIMES_FILE, '..'), { recursive: true });
await writeFile(
  TIMES_FILE,
  JSON.stringify({ ...lastTimes, ...Object.fromEntries(outcomes.map((o) => [o.name, o.ms])) }),
);
process.exitCode = failedFiles.length || failedChecks.length ? 1 : 0;

type Run = { output: string; ms: number; cpuMs: number; rss: number; exited: boolean };
type Worker = { run: (file: string) => Promise<Run>; alive: () => boolean; stop: () => Promise<void> };

/**
 * A worker process for slot `slot`, with the slot's own block of loopback ports (test/processes.ts). What the file's
 * code printed comes back with its answer; what its child processes wrote to the worker's own
 * output, and a crash's last words, are added to the file that was running.
 */
function startWorker(slot: number): Worker {
  const child = fork(join(ROOT, 'test', 'worker.ts'), [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, TEST_RUN_DIR: runDir, TEST_PORT_BASE: String(portBlockOf(slot)), FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    // Its own process group: stopping it stops what its files started and left running.
    detached: true,
  });
  let stray = '';
  child.stdout!.on('data', (chunk: Buffer) => (stray += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (stray += chunk));
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) =>
      resolve(`\nThe worker exited (${signal ?? `code ${code}`}) while it ran this file.\n`),
    ),
  );
  return {
    alive: () => child.exitCode === null && child.signalCode === null,
    run: async (file) => {
      const start = Date.now();
      stray = '';
      child.send({ file });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<string>((resolve) => {
        timer = setTimeout(() => {
          killGroup(child, 'SIGKILL');
          resolve(`\nKilled after ${seconds(FILE_TIMEOUT_MS)}: the file did not finish.\n`);
        }, FILE_TIMEOUT_MS);
      });
      const answered = new Promise<z.infer<typeof Done>>((resolve) =>
        child.once('message', (message) => resolve(Done.parse(message))),
      );
      const first = await Promise.race([
        answered.then(({ output, cpuMs, rss }) => ({ output, cpuMs, rss, exited: false })),
        exited.then((why) => ({ output: why, cpuMs: 0, rss: 0, exited: true })),
        timedOut.then((why) => ({ output: why, cpuMs: 0, rss: 0, exited: true })),
      ]);
      clearTimeout(timer);
      return {
        output: first.exited ? stray + first.output : first.output + stray,
        ms: Date.now() - start,
        cpuMs: first.cpuMs,
        rss: first.rss,
        exited: first.exited,
      };
    },
    stop: async () => {
      // The worker exits once disconnected; then what its files left running is stopped with its group.
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5_000);
      child.disconnect();
      await exited;
      clearTimeout(timer);
      killGroup(child, 'SIGTERM');
    },
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** A file's counts from uvu's summary; no summary (a crash, a hang) or a worker gone counts one failure at least. */
function outcomeOf(name: string, run: Run): Outcome {
  const output = run.output.replace(/\x1b\[[0-9;]*m/g, '');
  // uvu's own summary, the last one printed.
  const count = (label: string) => Number([...output.matchAll(new RegExp(`^ *${label}: +(\\d+)`, 'gm'))].at(-1)?.[1]);
  const [total, passed, skipped] = ['Total', 'Passed', 'Skipped'].map(count) as [number, number, number];
  const summarised = [total, passed, skipped].every(Number.isInteger) && total > 0;
  const counts = summarised ? { total, passed, skipped } : { total: 0, passed: 0, skipped: 0 };
  const unfinished = counts.total - counts.passed - counts.skipped;
  const failed = summarised && !run.exited ? unfinished : Math.max(1, unfinished);
  const outcome = { name, ...counts, failed, ms: run.ms, cpuMs: run.cpuMs, output };
  const mark = failed ? `✘ ${name}: ${outcome.passed} passed, ${failed} failed` : `✔ ${name}: ${outcome.passed} passed`;
  console.log(`${mark} (${seconds(run.ms)}, CPU ${seconds(run.cpuMs)})`);
  return outcome;
}

async function runCheck(name: string, args: string[]) {
  const { code, output, ms } = await runNode(args);
  console.log(`${code === 0 ? '✔' : '✘'} ${name} (${seconds(ms)})`);
  return { name, ok: code === 0, output };
}

/** `node <args>` in the checkout, its output kept. */
function runNode(args: string[]): Promise<{ code: number; output: string; ms: number }> {
  const start = Date.now();
  const child = spawn(process.execPath, args, { cwd: ROOT });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code: code ?? 1, output, ms: Date.now() - start })),
  );
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
