// Issue 30 item 5: AFTER_SWAP, the operator's command after a publish's swap, run by real /bin/sh.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runAfterSwap } from '../server/publish/after-swap.ts';
import { until } from './helpers.ts';
import { collectLog } from './collect-log.ts';

const ctx = {} as { dir: string; distDir: string; treeDir: string; lines: string[] };
const run = (command: string, timeoutMs?: number) =>
  runAfterSwap(command, ctx.treeDir, collectLog(ctx.lines, 'info'), timeoutMs);

const exits = suite('runAfterSwap');
exits.before(async () => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'depot-after-swap-'));
  ctx.distDir = join(ctx.dir, 'dist');
  ctx.treeDir = join(ctx.distDir, 'trees', '0123456789abcdef0123');
});
exits.after(() => rm(ctx.dir, { recursive: true, force: true }));
exits.before.each(() => {
  ctx.lines = [];
});

exits('how the command exited, as {ok, exitCode}', async () => {
  const cases: [string, { ok: boolean; exitCode: number | null }][] = [
    ['true', { ok: true, exitCode: 0 }],
    ['false', { ok: false, exitCode: 1 }],
    ['exit 3', { ok: false, exitCode: 3 }],
    ['no-such-command-for-depot', { ok: false, exitCode: 127 }],
    ['kill -9 $$', { ok: false, exitCode: null }],
  ];
  for (const [command, expected] of cases) assert.equal(await run(command), expected, command);
});

exits('the command finds the new tree in DEPOT_TREE and dist/ in DIST_DIR', async () => {
  const file = join(ctx.dir, 'seen');
  const result = await run(`printf '%s\\n%s\\n' "$DEPOT_TREE" "$DIST_DIR" > '${file}'`);
  assert.equal(result, { ok: true, exitCode: 0 });
  assert.is(await readFile(file, 'utf8'), `${ctx.treeDir}\n${ctx.distDir}\n`);
  assert.equal(ctx.lines.length, 1, 'no output: only the line saying how it went');
  assert.match(ctx.lines[0]!, /^\[after-swap\] AFTER_SWAP exited 0 after \d+\.\d s$/);
});

exits('its output is logged line by line; neither the command nor its environment is', async () => {
  const result = await run('echo one; echo two >&2; printf "three\\nfour"; SECRET_FOR_TEST=hidden-value; exit 2');
  assert.equal(result, { ok: false, exitCode: 2 });
  assert.equal(ctx.lines.slice(0, -1).sort(), [
    '[after-swap] four',
    '[after-swap] one',
    '[after-swap] stderr: two',
    '[after-swap] three',
  ]);
  assert.match(ctx.lines.at(-1)!, /^\[after-swap\] AFTER_SWAP exited 2 after/);
  const logged = ctx.lines.join('\n');
  for (const hidden of ['hidden-value', 'echo', ctx.treeDir, 'DEPOT_TREE', 'PATH='])
    assert.not.ok(logged.includes(hidden), hidden);
});

exits(
  'a command past its time is killed, with what it started, and reported as {ok: false, exitCode: null}',
  async () => {
    const pidFile = join(ctx.dir, 'sleep.pid');
    const started = Date.now();
    const result = await run(`sleep 30 & echo $! > '${pidFile}'; wait`, 300);
    assert.equal(result, { ok: false, exitCode: null });
    assert.ok(Date.now() - started < 10_000, 'not the 30 s the command asked for');
    assert.match(ctx.lines.at(-1)!, /^\[after-swap\] AFTER_SWAP killed after 0\.3 s$/);
    const sleeper = Number(await readFile(pidFile, 'utf8'));
    const alive = () => {
      try {
        process.kill(sleeper, 0);
        return true;
      } catch {
        return false;
      }
    };
    await until(() => !alive(), 'the sleep the command started is gone', 5_000);
  },
);

exits('a command that cannot be started is {ok: false, exitCode: null}, not a throw', async () => {
  assert.equal(await run('true\0'), { ok: false, exitCode: null });
  assert.match(ctx.lines.at(-1)!, /^\[after-swap\] AFTER_SWAP could not start: /);
});

exits.run();
