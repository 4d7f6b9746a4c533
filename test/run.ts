// `npm test`: the checks (types, format, unused code) and every test file, each file in its own
// process (uvu runs it), several at once; then one summary computed from all of them and the
// slowest files. `npm test -- <pattern>...` runs only the files whose names match, and no checks.
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { ROOT } from './processes.ts';

type Outcome = {
  name: string;
  total: number;
  passed: number;
  skipped: number;
  failed: number;
  ms: number;
  output: string;
};

const FILE_TIMEOUT_MS = 15 * 60_000;
const SLOWEST_SHOWN = 15;
const TIMES_FILE = join(ROOT, 'node_modules', '.cache', 'plugin-depot', 'test-times.json');

const patterns = process.argv.slice(2).map((p) => new RegExp(p));
const workers = Number(process.env.TEST_WORKERS ?? Math.max(2, availableParallelism() * 2));
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

// The slowest files start first (their times from the last run here), so no long file starts last.
const lastTimes: Record<string, number> = await readFile(TIMES_FILE, 'utf8').then(
  (text) => JSON.parse(text) as Record<string, number>,
  () => ({}),
);
files.sort((a, b) => (lastTimes[b] ?? 60_000) - (lastTimes[a] ?? 60_000));

// One folder for the whole run: fixtures that files share (built trees) are made there once.
const runDir = join(tmpdir(), `depot-test-run-${process.pid}`);
await mkdir(runDir, { recursive: true });

// The CLI the tests run (`npm run depot`) is bundled on its first start: once here, not by several files at once.
await runNode(['build/cli/launch.mjs', 'help'], {});

console.log(`${files.length} test files on ${workers} workers${patterns.length ? '' : ', and the checks'}`);
const started = Date.now();
const limit = pLimit(workers);
const checkJobs = patterns.length
  ? []
  : Object.entries(CHECKS).map(([name, args]) => limit(() => runCheck(name, args)));
// A file takes a free slot while it runs, and with it the slot's block of ports.
const freeSlots = Array.from({ length: workers }, (_, slot) => slot);
const outcomes = await Promise.all(
  files.map((name) =>
    limit(async () => {
      const slot = freeSlots.shift()!;
      try {
        return await runFile(name, slot);
      } finally {
        freeSlots.push(slot);
      }
    }),
  ),
);
const checks = await Promise.all(checkJobs);
await rm(runDir, { recursive: true, force: true });

const sum = (key: 'total' | 'passed' | 'skipped' | 'failed') => outcomes.reduce((n, o) => n + o[key], 0);
const failedChecks = checks.filter((c) => !c.ok);
const failedFiles = outcomes.filter((o) => o.failed > 0);
for (const o of failedFiles) console.log(`\n── ${o.name} failed ──\n${o.output.trimEnd()}`);
for (const c of failedChecks) console.log(`\n── ${c.name} failed ──\n${c.output.trimEnd()}`);

console.log(`\n  Total:     ${sum('total')}`);
console.log(`  Passed:    ${sum('passed')}`);
console.log(`  Skipped:   ${sum('skipped')}`);
console.log(
  `  Failed:    ${sum('failed')}${failedChecks.length ? ` (and ${failedChecks.length} check(s) failed)` : ''}`,
);
console.log(`  Duration:  ${seconds(Date.now() - started)} on ${workers} workers`);
console.log(`\n  The ${Math.min(SLOWEST_SHOWN, outcomes.length)} slowest files:`);
for (const o of [...outcomes].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST_SHOWN)) {
  console.log(`  ${seconds(o.ms).padStart(8)}  ${o.name} (${o.total} tests)`);
}

await mkdir(join(TIMES_FILE, '..'), { recursive: true });
await writeFile(
  TIMES_FILE,
  JSON.stringify({ ...lastTimes, ...Object.fromEntries(outcomes.map((o) => [o.name, o.ms])) }),
);
process.exitCode = failedFiles.length || failedChecks.length ? 1 : 0;

/** One test file in its own process, uvu its runner; its outcome read from uvu's summary. */
async function runFile(name: string, slot: number): Promise<Outcome> {
  const pattern = `^${name.replace(/[.+]/g, '\\$&')}$`;
  const env = { TEST_RUN_DIR: runDir, TEST_PORT_BASE: String(portBase(slot)), FORCE_COLOR: '0' };
  const run = await runNode(['--import', 'tsx', 'node_modules/uvu/bin.js', '--no-color', 'test', pattern], env);
  const { code, ms } = run;
  const output = run.output.replace(/\x1b\[[0-9;]*m/g, '');
  // uvu's own summary, the last one printed (a test's output cannot come after it).
  const count = (label: string) => Number([...output.matchAll(new RegExp(`^ *${label}: +(\\d+)`, 'gm'))].at(-1)?.[1]);
  const [total, passed, skipped] = ['Total', 'Passed', 'Skipped'].map(count);
  const summarised = [total, passed, skipped].every(Number.isInteger) && total! > 0;
  // No summary (a crash, a hang cut at the timeout) or a non-zero exit counts as one failure at least.
  const failed = summarised ? Math.max(total! - passed! - skipped!, code === 0 ? 0 : 1) : 1;
  const outcome = {
    name,
    total: summarised ? total! : 0,
    passed: summarised ? passed! : 0,
    skipped: summarised ? skipped! : 0,
    failed,
    ms,
    output,
  };
  console.log(
    `${failed ? '✘' : '✔'} ${name}: ${outcome.passed} passed${failed ? `, ${failed} failed` : ''} (${seconds(ms)})`,
  );
  return outcome;
}

async function runCheck(name: string, args: string[]) {
  const { code, output, ms } = await runNode(args, {});
  console.log(`${code === 0 ? '✔' : '✘'} ${name} (${seconds(ms)})`);
  return { name, ok: code === 0, output };
}

/** `node <args>` in the checkout, output kept; killed with its process group past the timeout. */
function runNode(args: string[], env: Record<string, string>): Promise<{ code: number; output: string; ms: number }> {
  const start = Date.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, detached: true });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  const timer = setTimeout(() => {
    output += `\nKilled after ${seconds(FILE_TIMEOUT_MS)}: it did not finish.\n`;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }, FILE_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, output, ms: Date.now() - start });
    });
  });
}

/** Each file's own block of loopback ports (below Linux's ephemeral range, which bind(0) hands out). */
function portBase(slot: number): number {
  return 20_000 + slot * 250; // test/processes.ts hands out 250 from here
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
