import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { Storage } from './storage.ts';
import { throttledLog } from './throttled-log.ts';

/** What storage holds per entry; parsed on the way out like any input. */
const CachedBytes = z.object({ expiresAt: z.number().nullable(), data: z.base64() });

export type ByteCache = {
  get(key: string): Promise<Uint8Array | null>;
  /** ttlSeconds null, or a cache made with keepForever (the build's: keyed by inputs, never stale): no expiry. */
  set(key: string, bytes: Uint8Array, ttlSeconds: number | null): Promise<void>;
};

type ByteCacheOptions = { now?: () => number; memoryBytes?: number; keepForever?: boolean; warn?: (line: string) => void };

/**
 * Rendered answers (brand images, charts) in unstorage, shared by every origin when storage is
 * Redis, with a small in-process LRU in front for hot answers. Entries live under `namespace:`.
 * A cache never fails an answer: while storage is unreachable, reads miss and writes are dropped.
 */
export function createByteCache(
  storage: Storage,
  namespace: string,
  { now = Date.now, memoryBytes = 64 * 1024 * 1024, keepForever = false, warn = console.warn }: ByteCacheOptions = {},
): ByteCache {
  const warnOnce = throttledLog(warn, now);
  const unavailable = (error: unknown) => {
    warnOnce(`[cache] ${namespace}: storage unavailable, answering without the shared cache: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  };
  const memory = new LRUCache<string, { bytes: Uint8Array; expiresAt: number | null }>({
    maxSize: memoryBytes,
    sizeCalculation: (entry) => Math.max(entry.bytes.length, 1),
  });
  const fresh = (expiresAt: number | null) => expiresAt === null || expiresAt > now();
  return {
    async get(key) {
      const hot = memory.get(key);
      if (hot && fresh(hot.expiresAt)) return hot.bytes;
      const parsed = CachedBytes.safeParse(await storage.getItem(`${namespace}:${key}`).catch(unavailable));
      // A missing, torn or foreign entry is a miss: the answer is computed again.
      if (!parsed.success || !fresh(parsed.data.expiresAt)) return null;
      const bytes = new Uint8Array(Buffer.from(parsed.data.data, 'base64'));
      memory.set(key, { bytes, expiresAt: parsed.data.expiresAt });
      return bytes;
    },
    async set(key, bytes, ttlSeconds) {
      const expiresAt = ttlSeconds === null || keepForever ? null : now() + ttlSeconds * 1000;
      memory.set(key, { bytes, expiresAt });
      // The ttl lets Redis drop expired entries itself; the file store keeps them until overwritten.
      const ttl = expiresAt === null ? undefined : Math.ceil((expiresAt - now()) / 1000);
      await storage.setItem(`${namespace}:${key}`, { expiresAt, data: Buffer.from(bytes).toString('base64') }, { ttl }).catch(unavailable);
    },
  };
}
