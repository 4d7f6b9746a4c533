import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sweepLeftovers } from '../server/sweep-leftovers.ts';
import { makeWorkspace, runDepot, spawnOrigin, until, type Workspace } from './helpers.ts';

// Issue 27, item 9: temporary files and lock folders left by a killed process were never swept.

const ctx = {} as { dir: string; live: ChildProcess; deadPid: number; workspace: Workspace };

/** The pid of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid!;
}

/** A process that runs until the suite ends (at most a minute), whose pid names the "live" leftovers. */
function liveProcess(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
}

const MINUTES_AGO = (minutes: number) => new Date(Date.now() - minutes * 60_000);

/** Leftovers of every kind under `dir`, with what a sweep must do to each. */
async function plantLeftovers(dir: string): Promise<{ removed: string[]; kept: string[] }> {
  const at = (...parts: string[]) => join(dir, ...parts);
  await mkdir(at('servers', 'abc'), { recursive: true });
  const files: [string, boolean][] = [
    [at('servers', 'abc', `2026-01-01.tmp-${ctx.deadPid}-0`), true],
    [at(`users.json.tmp-${ctx.deadPid}-17`), true],
    [at('servers', 'abc', `2026-01-02.tmp-${ctx.live.pid}-3`), false],
    [at('servers', 'abc', '2026-01-03'), false],
    [at('notes.tmp-old'), false],
  ];
  for (const [path] of files) await writeFile(path, 'x');
  const folders: [string, Date, boolean][] = [
    [at('servers', 'abc', '2026-01-01.lock'), MINUTES_AGO(5), true],
    [at('chart-url-key.lock'), new Date(), false],
  ];
  for (const [path, time] of folders) {
    await mkdir(path);
    await utimes(path, time, time);
  }
  // A lock folder with something in it (a build lock naming its owner) is not this sweep's.
  await mkdir(at('.build.lock'));
  await writeFile(at('.build.lock', 'owner.json'), '{}');
  await utimes(at('.build.lock'), MINUTES_AGO(5), MINUTES_AGO(5));
  const all = [
    ...files.map(([path, gone]) => [path, gone] as const),
    ...folders.map(([p, , gone]) => [p, gone] as const),
  ];
  return {
    removed: all.filter(([, gone]) => gone).map(([path]) => path),
    kept: [...all.filter(([, gone]) => !gone).map(([path]) => path), at('.build.lock', 'owner.json')],
  };
}

async function listAll(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true })).map((entry) =>
    join(entry.parentPath, entry.name),
  );
}

async function assertSwept(dir: string, expected: { removed: string[]; kept: string[] }) {
  const present = await listAll(dir);
  for (const path of expected.removed) assert.not.ok(present.includes(path), `${path} was left`);
  for (const path of expected.kept) assert.ok(present.includes(path), `${path} was removed`);
}

const sweep = suite('sweepLeftovers');
sweep.before(async () => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'depot-sweep-'));
  ctx.live = liveProcess();
  ctx.deadPid = await deadPid();
});
sweep.after(async () => {
  ctx.live.kill('SIGKILL');
  await rm(ctx.dir, { recursive: true, force: true });
});

sweep("a dead pid's temporary files and an untouched lock folder go; a live pid's and a fresh lock stay", async () => {
  const dir = join(ctx.dir, 'unit');
  const expected = await plantLeftovers(dir);
  const removed = await sweepLeftovers([dir, join(ctx.dir, 'missing')]);
  assert.equal(removed.sort(), [...expected.removed].sort());
  await assertSwept(dir, expected);
  assert.equal(await sweepLeftovers([dir]), [], 'a second sweep finds nothing');
});

sweep('our own pid: a file older than this process was left by an earlier one with the same pid', async () => {
  const dir = join(ctx.dir, 'own');
  await mkdir(dir);
  const earlier = join(dir, `a.tmp-${process.pid}-0`);
  const ours = join(dir, `b.tmp-${process.pid}-1`);
  await writeFile(earlier, 'x');
  await writeFile(ours, 'x');
  const before = new Date(Date.now() - process.uptime() * 1000 - 60_000);
  await utimes(earlier, before, before);
  assert.equal(await sweepLeftovers([dir]), [earlier]);
});

sweep.run();

const starts = suite('swept at start: the origin (STORAGE_DIR, data/, build cache) and the CLI (data/)');
starts.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.live = liveProcess();
  ctx.deadPid = await deadPid();
});
starts.after(async () => {
  ctx.live.kill('SIGKILL');
  await ctx.workspace?.remove();
});

starts('the origin sweeps its store and data/ beside serving', async () => {
  const storage = await plantLeftovers(ctx.workspace.storageDir);
  const data = await plantLeftovers(join(ctx.workspace.dataDir, 'versions'));
  const origin = await spawnOrigin(ctx.workspace);
  try {
    await until(() => origin.stdout.some((line) => line.includes('"event":"swept"')), 'the sweep is logged');
    const logged = JSON.parse(origin.stdout.find((line) => line.includes('"event":"swept"'))!) as { removed: number };
    assert.is(logged.removed, storage.removed.length + data.removed.length);
    await assertSwept(ctx.workspace.storageDir, storage);
    await assertSwept(join(ctx.workspace.dataDir, 'versions'), data);
  } finally {
    origin.child.kill('SIGTERM');
    await origin.exited;
  }
});

starts('a CLI command sweeps data/', async () => {
  const data = await plantLeftovers(join(ctx.workspace.dataDir, 'jars'));
  const result = await runDepot(['user', 'add', 'sweeper'], ctx.workspace);
  assert.is(result.code, 0, result.stderr);
  await assertSwept(join(ctx.workspace.dataDir, 'jars'), data);
});

starts.run();
