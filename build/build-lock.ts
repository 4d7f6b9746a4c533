import { readFileSync } from 'node:fs';
import { mkdir, readFile, rm, rmdir, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';

// One build at a time per dist/: a folder made with mkdir (atomic) holding owner.json (pid, host,
// command, start time). A build killed with SIGKILL leaves the folder behind; the next build sees
// that its owner is gone (same host, pid not running, a zombie, or now another process) and takes
// the lock over at once instead of waiting for it to age. An owner that cannot be checked (another host, or a lock without
// owner.json as proper-lockfile made them) counts as gone once its heartbeat is a minute old.

const OWNER_FILE = 'owner.json';
/** The owner touches the lock this often, so a lock from another host can be judged by its age. */
const HEARTBEAT_MS = 10_000;
const STALE_AFTER_MS = 60_000;
/** A takeover is a few file operations: a takeover folder older than this was left by a crash. */
const TAKEOVER_STALE_MS = 10_000;
const REPORT_EVERY_MS = 15_000;

/** `start`: when the process started (Linux: /proc/<pid>/stat), so a pid used again by another process is told apart. */
type LockOwner = { pid: number; host: string; command: string; since: string; start?: number };

export type BuildLockOptions = {
  /** How long to wait for a live owner before giving up (default 2 minutes). */
  timeoutMs?: number;
  /** Lines for the operator while waiting or taking over (stderr in the CLI). */
  notice?: (line: string) => void;
};

/** Another build held the lock for longer than the wait allowed. */
export class BuildLockTimeoutError extends Error {}

/** Waits for the lock at `lockDir`; the returned function releases it. */
export async function acquireBuildLock(lockDir: string, options: BuildLockOptions = {}): Promise<() => Promise<void>> {
  const { timeoutMs = 120_000, notice = () => {} } = options;
  const started = Date.now();
  let reportedAt = -Infinity;
  for (let attempt = 0; ; attempt++) {
    const owner = await tryLock(lockDir);
    if (owner) return holdLock(lockDir, owner);
    const held = await inspectLock(lockDir);
    if (held === null) continue; // released meanwhile
    const waited = Date.now() - started;
    if (waited > timeoutMs) {
      throw new BuildLockTimeoutError(
        `${lockDir}: another build (${describeOwner(held.owner)}) still holds the lock after ${Math.round(waited / 1000)} s; if none is running, remove that folder`,
      );
    }
    if (held.gone) {
      notice(`[build] ${lockDir} was left by ${describeOwner(held.owner)}, which ${held.gone}: taking the lock over`);
      await takeOver(lockDir, held.fingerprint);
      continue;
    }
    if (Date.now() - reportedAt >= REPORT_EVERY_MS) {
      reportedAt = Date.now();
      notice(`[build] waiting for ${lockDir}: held by ${describeOwner(held.owner)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 500)));
  }
}

async function tryLock(lockDir: string): Promise<LockOwner | null> {
  try {
    await mkdir(lockDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw error;
  }
  const self = processState(process.pid);
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    command: [basename(process.argv[1] ?? 'node'), ...process.argv.slice(2, 3)].join(' '),
    since: new Date().toISOString(),
    ...(self !== null && self !== 'gone' ? { start: self.start } : {}),
  };
  await writeFile(join(lockDir, OWNER_FILE), JSON.stringify(owner));
  return owner;
}

/** Locks this process holds: a lock naming our own pid and not in here was left by an earlier process. */
const HELD_HERE = new Set<string>();

function holdLock(lockDir: string, owner: LockOwner): () => Promise<void> {
  HELD_HERE.add(lockDir);
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(lockDir, now, now).catch(() => {});
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return async () => {
    clearInterval(heartbeat);
    HELD_HERE.delete(lockDir);
    // Only our own lock: if it was taken over (we were judged gone), the folder is another build's.
    const current = await readOwner(lockDir);
    if (current?.pid === owner.pid && current.since === owner.since)
      await rm(lockDir, { recursive: true, force: true });
  };
}

type HeldLock = { owner: LockOwner | null; gone: string | null; fingerprint: string };

async function inspectLock(lockDir: string): Promise<HeldLock | null> {
  const info = await stat(lockDir).catch(() => null);
  if (!info) return null;
  const owner = await readOwner(lockDir);
  const fingerprint = JSON.stringify({ owner, mtime: owner ? null : info.mtimeMs });
  return { owner, gone: ownerGone(lockDir, owner, Date.now() - info.mtimeMs), fingerprint };
}

/** Why the lock's owner no longer holds it, or null while it may still be building. */
function ownerGone(lockDir: string, owner: LockOwner | null, age: number): string | null {
  if (owner && owner.host === hostname()) {
    // A pid is reused: after a restart (a container's, say) it may even be ours.
    if (owner.pid === process.pid) return HELD_HERE.has(lockDir) ? null : 'is no longer running';
    const state = processState(owner.pid);
    if (state === null) return isRunning(owner.pid) ? null : 'is no longer running';
    if (state === 'gone' || state.zombie || (owner.start !== undefined && owner.start !== state.start))
      return 'is no longer running';
    return null;
  }
  return age > STALE_AFTER_MS ? `has not touched it for ${Math.round(age / 1000)} s` : null;
}

/**
 * Linux's view of a process: its start time (clock ticks since boot) and whether it is a zombie
 * (killed, not yet reaped: `kill(pid, 0)` still succeeds); 'gone' when it does not exist; null
 * where /proc cannot tell (another system).
 */
function processState(pid: number): { start: number; zombie: boolean } | 'gone' | null {
  if (process.platform !== 'linux') return null;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : null;
  }
  // "pid (command) state ppid ...": the command may hold spaces and parentheses; starttime is field 22.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = Number(fields[19]);
  return Number.isFinite(start) ? { start, zombie: fields[0] === 'Z' } : null;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // running, as another user
  }
}

/**
 * Removes a lock judged abandoned. Two builds may judge it so at once: a second folder serialises
 * them, and the lock is removed only if it is still the one judged (not one taken meanwhile).
 */
async function takeOver(lockDir: string, fingerprint: string): Promise<void> {
  const guard = `${lockDir}.takeover`;
  try {
    await mkdir(guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const info = await stat(guard).catch(() => null);
    if (info && Date.now() - info.mtimeMs > TAKEOVER_STALE_MS) await rmdir(guard).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 50));
    return;
  }
  try {
    const still = await inspectLock(lockDir);
    if (still?.fingerprint === fingerprint) await rm(lockDir, { recursive: true, force: true });
  } finally {
    await rmdir(guard);
  }
}

async function readOwner(lockDir: string): Promise<LockOwner | null> {
  const text = await readFile(join(lockDir, OWNER_FILE), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const owner = JSON.parse(text) as LockOwner;
    return Number.isInteger(owner.pid) && typeof owner.host === 'string' ? owner : null;
  } catch {
    return null; // being written
  }
}

function describeOwner(owner: LockOwner | null): string {
  if (!owner) return 'a build that did not say who it is';
  const seconds = Math.round((Date.now() - Date.parse(owner.since)) / 1000);
  return `pid ${owner.pid} on ${owner.host} (${JSON.stringify(owner.command)}, started ${seconds} s ago)`;
}
