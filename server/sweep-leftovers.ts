import { readdir, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { TEMPORARY_FILE } from './write-atomic.ts';

/**
 * A lock folder (proper-lockfile's `<key>.lock`, as the embedded store takes them) untouched for
 * this long is abandoned: its holder refreshes it every second, and the store takes one over after 2 s.
 */
const ABANDONED_LOCK_MS = 60_000;

export type SweepOptions = {
  /** Is a process with this pid running? Default: `process.kill(pid, 0)` (EPERM: running as another user). */
  isRunning?: (pid: number) => boolean;
  now?: number;
  /** A temporary file naming this process's pid but older than its start was left by an earlier process (a container's pid 1). */
  startedAt?: number;
};

/**
 * Removes what a killed process left under `dirs` (each walked whole; a missing one is skipped):
 * writeFileAtomic's `<file>.tmp-<pid>-<n>` whose process is gone, and lock folders nobody has
 * touched for a minute. A running process's files are never touched, whoever it is (origins and
 * the CLI share STORAGE_DIR). Returns the paths removed.
 */
export async function sweepLeftovers(dirs: readonly string[], options: SweepOptions = {}): Promise<string[]> {
  const { isRunning = processIsRunning, now = Date.now() } = options;
  const startedAt = options.startedAt ?? Date.now() - process.uptime() * 1000;
  const removed: string[] = [];
  for (const dir of dirs) {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(
      (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? [] : Promise.reject(error)),
    );
    for (const entry of entries) {
      const path = join(entry.parentPath, entry.name);
      const owner = TEMPORARY_FILE.exec(entry.name)?.[1];
      if (entry.isFile() && owner !== undefined) {
        const pid = Number(owner);
        const left =
          pid === process.pid
            ? ((await stat(path).catch(() => null))?.mtimeMs ?? Infinity) < startedAt
            : !isRunning(pid);
        if (left && (await rm(path).then(() => true, missingIsFine))) removed.push(path);
      } else if (entry.isDirectory() && entry.name.endsWith('.lock')) {
        const info = await stat(path).catch(() => null);
        // rmdir, not rm: a folder with anything in it (a build lock naming its owner) is another kind of lock.
        if (info && now - info.mtimeMs > ABANDONED_LOCK_MS && (await rmdir(path).then(() => true, missingIsFine)))
          removed.push(path);
      }
    }
  }
  return removed;
}

/** Gone already (another sweep, or its owner finished): nothing removed. Not empty: kept. */
function missingIsFine(error: NodeJS.ErrnoException): false {
  if (error.code === 'ENOENT' || error.code === 'ENOTEMPTY' || error.code === 'EEXIST') return false;
  throw error;
}

function processIsRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
