import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BuildLockTimeoutError, acquireBuildLock } from '../build/build-lock.ts';
import { TREES_DIR } from '../server/tree/format.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import {
  makeWorkspace,
  pluginJar,
  runBuildCommand,
  runDepot,
  spawnScript,
  until,
  type Workspace,
  DEPOT_CLI,
} from './helpers.ts';

// build/build-lock.ts through the real commands: one build at a time per dist/, and a build killed
// with SIGKILL does not make the next one wait for its lock to age.

const ctx = {} as { workspace: Workspace };

const lockDir = () => join(ctx.workspace.distDir, '.build.lock');
const lockOwnerPid = async () => {
  const text = await readFile(join(lockDir(), 'owner.json'), 'utf8').catch(() => null);
  try {
    return text === null ? null : (JSON.parse(text) as { pid: number }).pid;
  } catch {
    return null;
  }
};
const releaseArgs = (jar: string, version: string) => [
  'release',
  jar,
  '--version',
  version,
  '--java',
  '21',
  '--software',
  'Purpur',
];

const lock = suite('the build lock');
lock.before.each(async () => {
  ctx.workspace = await makeWorkspace();
});
lock.after.each(() => ctx.workspace.remove());

lock('a release killed mid-build (SIGKILL) leaves its lock; the next release takes it over at once', async () => {
  const first = join(ctx.workspace.dir, 'Killed-8.0.0.jar');
  const second = join(ctx.workspace.dir, 'Next-8.1.0.jar');
  await writeFile(first, pluginJar('8.0.0'));
  await writeFile(second, pluginJar('8.1.0'));
  const killed = spawnScript(DEPOT_CLI, releaseArgs(first, '8.0.0'), ctx.workspace);
  // Progress lines start once the lock is held; after `stage` the staging folder exists too.
  await until(() => killed.stderr().includes('[build] stage:'), 'the release is building', 60_000);
  killed.child.kill('SIGKILL');
  await killed.exited;
  assert.ok(existsSync(lockDir()), 'the killed build left its lock');

  const started = Date.now();
  const next = await runDepot(releaseArgs(second, '8.1.0'), ctx.workspace);
  const took = Date.now() - started;
  assert.is(next.code, 0, next.stderr);
  // Before: proper-lockfile waited for the lock to be 60 s old, silently.
  assert.ok(took < 30_000, `${took} ms`);
  assert.match(
    next.stderr,
    new RegExp(`was left by pid ${killed.child.pid} on .*, which is no longer running: taking the lock over`),
  );
  assert.not.ok(existsSync(lockDir()), 'the lock is released');
  const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const versions = tree.catalog.versions.map((v) => v.pluginVersion);
  assert.ok(
    versions.includes('8.0.0') && versions.includes('8.1.0'),
    'both records are served (the killed one was written before its build)',
  );
  const staging = (await readdir(join(ctx.workspace.distDir, TREES_DIR))).filter((n) => n.startsWith('.staging-'));
  assert.equal(staging, [], "the killed build's staging folder is removed");
});

lock('while a live build holds the lock, the next says on stderr what it waits for, then builds', async () => {
  const holder = spawnScript('build/main.ts', [], ctx.workspace);
  try {
    await until(() => holder.stdout().includes('[build] load:'), 'the first build holds the lock', 60_000);
    holder.child.kill('SIGSTOP'); // alive, holding the lock, for as long as the test needs
    const waiting = spawnScript('build/main.ts', [], ctx.workspace);
    await until(() => waiting.stderr().includes('waiting for'), 'the second build says it waits', 30_000);
    assert.is(await lockOwnerPid(), holder.child.pid, 'the lock names its owner');
    assert.match(
      waiting.stderr(),
      new RegExp(
        `\\[build\\] waiting for .*\\.build\\.lock: held by pid ${holder.child.pid} on .* \\("main\\.ts", started \\d+ s ago\\)`,
      ),
    );
    await new Promise((r) => setTimeout(r, 500));
    assert.is(waiting.child.exitCode, null, 'still waiting for the live owner');
    assert.not.match(waiting.stdout(), /\[build\] load:/, 'it has not started building');
    holder.child.kill('SIGCONT');
    assert.is(await holder.exited, 0, holder.stderr());
    assert.is(await waiting.exited, 0, waiting.stderr());
    assert.match(waiting.stdout(), /\[build\] swap:/);
    assert.not.match(waiting.stderr(), /taking the lock over/);
  } finally {
    holder.child.kill('SIGCONT');
  }
});

lock('a lock whose pid now belongs to another process (a pid used again) is taken over at once', async () => {
  await mkdir(lockDir());
  // This test's own process is running, but it is not the process that took the lock: it started at another time.
  const owner = {
    pid: process.pid,
    host: hostname(),
    command: 'main.ts',
    since: new Date(Date.now() - 5_000).toISOString(),
    start: 1,
  };
  await writeFile(join(lockDir(), 'owner.json'), JSON.stringify(owner));
  const started = Date.now();
  const result = await runBuildCommand(ctx.workspace);
  assert.is(result.code, 0, result.stderr);
  assert.ok(Date.now() - started < 30_000, `${Date.now() - started} ms`);
  assert.match(
    result.stderr,
    new RegExp(`was left by pid ${process.pid} on .*, which is no longer running: taking the lock over`),
  );
});

lock('a lock that names no owner (an older build, or another host) is taken over once it is a minute old', async () => {
  await mkdir(lockDir());
  const old = new Date(Date.now() - 120_000);
  await utimes(lockDir(), old, old);
  const started = Date.now();
  const result = await runBuildCommand(ctx.workspace);
  assert.is(result.code, 0, result.stderr);
  assert.ok(Date.now() - started < 30_000, `${Date.now() - started} ms`);
  assert.match(
    result.stderr,
    /was left by a build that did not say who it is, which has not touched it for 1\d\d s: taking the lock over/,
  );
});

lock(
  'in one process too, a second holder waits for the first; a wait longer than allowed fails naming the holder',
  async () => {
    await mkdir(ctx.workspace.distDir, { recursive: true });
    const release = await acquireBuildLock(lockDir());
    const notices: string[] = [];
    const error = await acquireBuildLock(lockDir(), { timeoutMs: 800, notice: (line) => notices.push(line) }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.instance(error, BuildLockTimeoutError);
    assert.match(
      (error as Error).message,
      // The wait it names is the one it waited: 0.8 s, or longer on a loaded machine.
      /still holds the lock after \d+ s; if none is running, remove that folder/,
    );
    assert.match(notices.join('\n'), new RegExp(`waiting for .*: held by pid ${process.pid} `));
    const second = acquireBuildLock(lockDir(), { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 300));
    await release();
    await (
      await second
    )();
    assert.not.ok(existsSync(lockDir()));
  },
);
lock.run();
