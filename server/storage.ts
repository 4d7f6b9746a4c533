import fs, { mkdirSync, type Stats } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Redis } from 'ioredis';
import { createRequire } from 'node:module';
import { lock } from 'proper-lockfile';
import { createStorage, type Driver, type Storage } from 'unstorage';
import fsLiteDriver from 'unstorage/drivers/fs-lite';
import memoryDriver from 'unstorage/drivers/memory';
import type { Log } from './helpers/log.ts';
import { REDIS_OPTIONS, watchRedis, withCommandDeadline } from './redis.ts';
import { TEMPORARY_FILE, writeFileAtomic } from './write-atomic.ts';

export type { Storage };

/** Shared state: unstorage over files, memory or Redis; `redis` is the client when it is Redis. */
export type StateStore = { storage: Storage; redis?: Redis };

/** Redis keys of the storage start with this; the rate limit's with `depot:rate`. */
const REDIS_BASE = 'depot';

/** The Redis key the storage driver keeps a storage key under, for what goes to Redis directly (scripts, migration). */
export function redisKey(key: string): string {
  return `${REDIS_BASE}:${key}`;
}

/**
 * The state store could not be reached (Redis down). Answers that need it say 503; caches treat
 * it as a miss. Thrown in place of the client's own error by every storage call.
 */
export class StorageUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`storage unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * A Redis command failed: the one mapping of the stores that talk to Redis directly (scripts,
 * sets, leases). Use as `.catch(unavailable)`.
 */
export function unavailable(error: unknown): Promise<never> {
  return Promise.reject(new StorageUnavailableError(error));
}

/**
 * As `unavailable`, but a reply of Redis itself to a script (ReplyError: the script failed) is a
 * bug to report and stays as it is; anything else (down, timed out) is unavailable.
 */
export function unavailableUnlessScriptFailed(error: unknown): Promise<never> {
  return error instanceof Error && error.name === 'ReplyError' ? Promise.reject(error) : unavailable(error);
}

/** Render caches live under this prefix in every store (Redis: `depot:cache:...`), apart from records. */
export const CACHE_PREFIX = 'cache';

/**
 * STORAGE_DIR holds secrets (the chart-URL key signs URLs for every private chart; webhooks'
 * secrets sign their deliveries): its folders are made for the owner alone, its files likewise.
 */
export const PRIVATE_FOLDER = 0o700;

/**
 * The file system proper-lockfile uses, but for one call: its lock folders are made owner-only
 * from the start (its own mkdir takes the default mode, and a lock lives inside STORAGE_DIR).
 */
export const PRIVATE_LOCK_FS = {
  ...fs,
  mkdir: (path: string, done: (error: NodeJS.ErrnoException | null) => void) =>
    fs.mkdir(path, { mode: PRIVATE_FOLDER }, done),
};
export const PRIVATE_FILE = 0o600;

/**
 * All state goes through unstorage: files under `dir` (the embedded default), or memory for tests.
 * Every write replaces its file atomically (a crash leaves the old or the new record, never a torn
 * one); the caches are a mount of their own, so listing them walks only their folder. The folder
 * is made here, for its owner alone, before anything (a lock, a journal) could make it otherwise.
 */
export function createFileStorage(dir: string): Storage {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_FOLDER });
  const storage = createStorage({ driver: atomicFileDriver(dir) });
  storage.mount(CACHE_PREFIX, atomicFileDriver(join(dir, CACHE_PREFIX)));
  return storage;
}

/** The embedded store's folder when `storage` keeps its records in files (createFileStorage); else undefined. */
export function filesFolderOf(storage: Storage): string | undefined {
  const { driver } = storage.getMount('');
  return driver.name === 'atomic-fs' ? (driver.options as { base: string }).base : undefined;
}

/** A lock left by a process that died is taken over after this long (proper-lockfile's minimum). */
const STALE_LOCK_MS = 2000;
/** How long a writer waits for a key another process holds before the write fails (503). */
const LOCK_WAIT_MS = 5000;

/** `wait` false: null at once when another holder has the key (a lease), instead of waiting up to LOCK_WAIT_MS. */
type LockingDriver = Driver & { lockKey(key: string, wait?: boolean): Promise<(() => Promise<void>) | null> };

/** fs-lite's layout (`a:b:c` -> `a/b/c`), with atomic writes and a lock per key across processes. */
function atomicFileDriver(base: string): LockingDriver {
  // The player-count journal's segments are no records (charts/samples/journal-segment.ts).
  const ignore = (path: string) =>
    TEMPORARY_FILE.test(path) || path.endsWith('.lock') || path.endsWith('.samples-journal');
  const files = fsLiteDriver({ base, ignore });
  const pathOf = (key: string) => {
    if (key.split(':').some((part) => part === '..' || part.includes('/')))
      throw new Error(`Invalid storage key ${JSON.stringify(key)}`);
    return join(base, ...key.split(':'));
  };
  const write = async (key: string, value: string | Uint8Array) => {
    const path = pathOf(key);
    // The folder exists but for a key's first write: make it only then.
    await writeFileAtomic(path, value, { mode: PRIVATE_FILE }).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      await mkdir(dirname(path), { recursive: true, mode: PRIVATE_FOLDER });
      await writeFileAtomic(path, value, { mode: PRIVATE_FILE });
    });
  };
  return {
    ...files,
    name: 'atomic-fs',
    setItem: (key, value) => write(key, value),
    setItemRaw: (key, value) => write(key, value as Uint8Array),
    // fs-lite walks the whole store whatever the prefix; unstorage hands a prefix as a folder
    // (`a:b:`), so only that folder is walked: the delivery loop lists its index every poll.
    async getKeys(prefix: string | undefined, options) {
      const folder = (prefix ?? '').split(':').filter(Boolean);
      if (folder.length === 0) return files.getKeys!('', options);
      const keys = await Promise.resolve(
        fsLiteDriver({ base: pathOf(folder.join(':')), ignore }).getKeys!('', options),
      ).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOTDIR' ? [] : Promise.reject(error)));
      return (keys as string[]).map((key) => [...folder, key].join(':'));
    },
    async lockKey(key, wait = true) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true, mode: PRIVATE_FOLDER });
      const release = await lock(path, {
        realpath: false,
        fs: PRIVATE_LOCK_FS,
        stale: STALE_LOCK_MS,
        retries: wait ? { retries: Math.ceil(LOCK_WAIT_MS / 50), minTimeout: 5, maxTimeout: 50, factor: 1.5 } : 0,
        // A lock that could not be kept fresh (the disk stalled): the write under it goes on; log, never throw from a timer.
        onCompromised: (error) => console.error(`[storage] lock on ${key} lost: ${error.message}`),
      }).catch((error: NodeJS.ErrnoException) => (!wait && error.code === 'ELOCKED' ? null : unavailable(error)));
      return release && (() => release().catch(() => {}));
    },
  };
}

/**
 * Runs `update` holding `key` against every process that shares the store: the embedded store's
 * files are written by the origin and the CLI, so a read-modify-write of one record takes its file
 * lock. Memory has one process and Redis updates in scripts, so there `update` just runs.
 */
export async function withKeyLock<T>(storage: Storage, key: string, update: () => Promise<T>): Promise<T> {
  const driver = storage.getMount(key).driver as Partial<LockingDriver>;
  if (!driver.lockKey) return update();
  const release = (await driver.lockKey(key.slice(storage.getMount(key).base.length)))!;
  try {
    return await update();
  } finally {
    await release();
  }
}

/** Keys held in this process by tryKeyLock on a store without file locks (memory). */
const heldInProcess = new WeakMap<Storage, Set<string>>();

/**
 * Holds `key` if no other holder (process, or caller in this process) does, else null at once: a
 * lease on work that must not run twice at the same time. Files: the same lock file as
 * withKeyLock, taken over 2 s after a holder died. Not for Redis, whose callers set a key NX.
 */
export async function tryKeyLock(storage: Storage, key: string): Promise<(() => Promise<void>) | null> {
  const driver = storage.getMount(key).driver as Partial<LockingDriver>;
  if (driver.lockKey) return driver.lockKey(key.slice(storage.getMount(key).base.length), false);
  const held = heldInProcess.get(storage) ?? new Set<string>();
  heldInProcess.set(storage, held);
  if (held.has(key)) return null;
  held.add(key);
  return async () => void held.delete(key);
}

/**
 * Said once at start when an existing STORAGE_DIR lets other local users in (made by an older
 * depot, 0755): they could read the chart-URL key and webhooks' secrets. Null when it is private or absent.
 */
export async function storageDirExposure(dir: string): Promise<string | null> {
  const found: Stats | null = await stat(dir).catch(() => null);
  if (!found?.isDirectory() || (found.mode & 0o077) === 0) return null;
  const mode = (found.mode & 0o777).toString(8).padStart(4, '0');
  return `[storage] STORAGE_DIR ${dir} is open to other local users (mode ${mode}); it holds the chart-URL key and webhook secrets. Fix: chmod -R go= ${dir}`;
}

export function createMemoryStorage(): Storage {
  return createStorage({ driver: memoryDriver() });
}

/**
 * REDIS_URL: every origin's state in one Redis, through unstorage's redis driver. Its client fails
 * commands at once while the connection is down and reconnects by itself (see REDIS_OPTIONS).
 */
export function createRedisStorage(url: string, log?: Log): StateStore {
  // Loaded here, not at import: ioredis takes about 0.1 s to load, which every CLI command and a
  // release without REDIS_URL would pay for nothing.
  const redisDriver = createRequire(import.meta.url)(
    'unstorage/drivers/redis',
  ) as typeof import('unstorage/drivers/redis').default;
  const driver = redisDriver({ url, base: REDIS_BASE, ...REDIS_OPTIONS });
  const redis = withCommandDeadline(watchRedis(driver.getInstance!() as Redis, url, log));
  return { storage: createStorage({ driver: failingAsUnavailable(driver) }), redis };
}

/** The store the configuration names: Redis when REDIS_URL is set, else files in STORAGE_DIR. */
export function openStateStore(config: { storageDir: string; redisUrl?: string | undefined }, log?: Log): StateStore {
  return config.redisUrl ? createRedisStorage(config.redisUrl, log) : { storage: createFileStorage(config.storageDir) };
}

function failingAsUnavailable(driver: Driver): Driver {
  const wrapped: Record<string, unknown> = { ...driver };
  for (const name of [
    'hasItem',
    'getItem',
    'getItemRaw',
    'getItems',
    'setItem',
    'setItemRaw',
    'removeItem',
    'getKeys',
    'clear',
  ] as const) {
    const call = driver[name] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (call) wrapped[name] = (...args: unknown[]) => Promise.resolve(call(...args)).catch(unavailable);
  }
  return wrapped as unknown as Driver;
}
