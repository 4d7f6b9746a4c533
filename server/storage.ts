import type { Redis } from 'ioredis';
import { createStorage, type Driver, type Storage } from 'unstorage';
import fsLiteDriver from 'unstorage/drivers/fs-lite';
import memoryDriver from 'unstorage/drivers/memory';
import redisDriver from 'unstorage/drivers/redis';
import { REDIS_OPTIONS, watchRedis } from './redis.ts';

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

/** All state goes through unstorage: files under `dir` (the embedded default), or memory for tests. */
export function createFileStorage(dir: string): Storage {
  return createStorage({ driver: fsLiteDriver({ base: dir }) });
}

export function createMemoryStorage(): Storage {
  return createStorage({ driver: memoryDriver() });
}

/**
 * REDIS_URL: every origin's state in one Redis, through unstorage's redis driver. Its client fails
 * commands at once while the connection is down and reconnects by itself (see REDIS_OPTIONS).
 */
export function createRedisStorage(url: string, warn: (line: string) => void = console.warn): StateStore {
  const driver = redisDriver({ url, base: REDIS_BASE, ...REDIS_OPTIONS });
  const redis = watchRedis(driver.getInstance!() as Redis, url, warn);
  return { storage: createStorage({ driver: failingAsUnavailable(driver) }), redis };
}

/** The store the configuration names: Redis when REDIS_URL is set, else files in STORAGE_DIR. */
export function openStateStore(config: { storageDir: string; redisUrl?: string | undefined }, warn?: (line: string) => void): StateStore {
  return config.redisUrl ? createRedisStorage(config.redisUrl, warn) : { storage: createFileStorage(config.storageDir) };
}

function failingAsUnavailable(driver: Driver): Driver {
  const wrapped: Record<string, unknown> = { ...driver };
  for (const name of ['hasItem', 'getItem', 'getItems', 'setItem', 'removeItem', 'getKeys', 'clear'] as const) {
    const call = driver[name] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (call) wrapped[name] = (...args: unknown[]) => Promise.resolve(call(...args)).catch((error: unknown) => Promise.reject(new StorageUnavailableError(error)));
  }
  return wrapped as unknown as Driver;
}
