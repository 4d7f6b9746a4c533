import { LRUCache } from 'lru-cache';
import pLimit from 'p-limit';
import { z } from 'zod';
import { prefixStorage } from 'unstorage';
import { CACHE_PREFIX, type Storage } from './storage.ts';
import { STDERR_LINES, type Log } from './helpers/log.ts';
import { throttledLog } from './helpers/throttled-log.ts';

/**
 * A stored entry: a 4-byte mark, its expiry (a float64, ms since the epoch; -1: never), then the
 * bytes as they are. The expiry travels with the bytes because the file and memory drivers ignore
 * TTLs and Redis would need a second round trip to tell one. An entry without the mark (torn,
 * foreign, or of the former base64-in-JSON layout) reads as a miss.
 */
const MARK = Buffer.from('DPC1');
const HEADER_BYTES = MARK.length + 8;
const NEVER = -1;

function encodeEntry(bytes: Uint8Array, expiresAt: number | null): Uint8Array {
  const entry = Buffer.allocUnsafe(HEADER_BYTES + bytes.length);
  MARK.copy(entry);
  entry.writeDoubleLE(expiresAt ?? NEVER, MARK.length);
  entry.set(bytes, HEADER_BYTES);
  return entry;
}

/** What storage holds per entry; parsed on the way out like any input. */
const StoredEntry = z
  .instanceof(Uint8Array)
  .refine((raw) => raw.length >= HEADER_BYTES && Buffer.from(raw.buffer, raw.byteOffset, MARK.length).equals(MARK))
  .transform((raw) => {
    const expiry = Buffer.from(raw.buffer, raw.byteOffset, raw.length).readDoubleLE(MARK.length);
    return { expiresAt: expiry === NEVER ? null : expiry, bytes: raw.subarray(HEADER_BYTES) };
  });

export type ByteCache = {
  get(key: string): Promise<Uint8Array | null>;
  /** ttlSeconds null, or a cache made with keepForever (the build's: keyed by inputs, never stale): no expiry. */
  set(key: string, bytes: Uint8Array, ttlSeconds: number | null): Promise<void>;
};

type ByteCacheOptions = {
  now?: () => number;
  memoryBytes?: number;
  keepForever?: boolean;
  budget?: CacheBudget;
  log?: Log;
};

/**
 * Rendered answers (brand images, charts) in unstorage, shared by every origin when storage is
 * Redis, with a small in-process LRU in front for hot answers. Entries live under
 * `cache:<namespace>:`; with a budget (the embedded store) their bytes are capped. A cache never
 * fails an answer: while storage is unreachable, reads miss and writes are dropped.
 */
export function createByteCache(
  storage: Storage,
  namespace: string,
  {
    now = Date.now,
    memoryBytes = 64 * 1024 * 1024,
    keepForever = false,
    budget,
    log = STDERR_LINES,
  }: ByteCacheOptions = {},
): ByteCache {
  const warnOnce = throttledLog((line) => log.warn(line), now);
  const unavailable = (error: unknown) => {
    warnOnce(
      `[cache] ${namespace}: storage unavailable, answering without the shared cache: ${error instanceof Error ? error.message : String(error)}`,
    );
    return null;
  };
  const memory = new LRUCache<string, { bytes: Uint8Array; expiresAt: number | null }>({
    maxSize: memoryBytes,
    sizeCalculation: (entry) => Math.max(entry.bytes.length, 1),
  });
  const fresh = (expiresAt: number | null) => expiresAt === null || expiresAt > now();
  const base = `${CACHE_PREFIX}:${namespace}`;
  const entries = prefixStorage(storage, base);
  return {
    async get(key) {
      const hot = memory.get(key);
      if (hot && fresh(hot.expiresAt)) {
        budget?.used(`${base}:${key}`);
        return hot.bytes;
      }
      const parsed = StoredEntry.safeParse(await entries.getItemRaw(key).catch(unavailable));
      // A missing, torn or foreign entry is a miss: the answer is computed again.
      if (!parsed.success || !fresh(parsed.data.expiresAt)) return null;
      budget?.used(`${base}:${key}`);
      memory.set(key, parsed.data);
      return parsed.data.bytes;
    },
    async set(key, bytes, ttlSeconds) {
      const expiresAt = ttlSeconds === null || keepForever ? null : now() + ttlSeconds * 1000;
      memory.set(key, { bytes, expiresAt });
      const entry = encodeEntry(bytes, expiresAt);
      if (budget && !budget.fits(entry.length)) return;
      // The ttl lets Redis drop expired entries itself; in the embedded store the budget sweeps them.
      const ttl = expiresAt === null ? undefined : Math.ceil((expiresAt - now()) / 1000);
      const written = await entries.setItemRaw(key, entry, { ttl }).then(() => true, unavailable);
      if (written) await budget?.stored(`${base}:${key}`, entry.length, expiresAt);
    },
  };
}

export type CacheBudget = {
  /** Could an entry of this many stored bytes be kept at all? */
  fits(bytes: number): boolean;
  /** A stored entry was read: it is now the most recently used. */
  used(key: string): void;
  /** An entry was written: its bytes count, and the least recently used entries go while over the cap. */
  stored(key: string, bytes: number, expiresAt: number | null): Promise<void>;
  stop(): void;
};

/** Namespaces of caches stored at the top level before they moved under `cache:`. */
const FORMER_CACHES = ['brand-images', 'charts'];
const SWEEP_EVERY_MS = 10 * 60_000;

/** The budget's index: entries in least-recently-used order (a Map keeps insertion order) and their byte total. */
type BudgetIndex = {
  entries: Map<string, { bytes: number; expiresAt: number | null }>;
  total: number;
};

type BudgetStore = { storage: Storage; index: BudgetIndex; log: Log };

function forgetEntry(index: BudgetIndex, key: string): void {
  index.total -= index.entries.get(key)?.bytes ?? 0;
  index.entries.delete(key);
}

function recordEntry(index: BudgetIndex, key: string, bytes: number, expiresAt: number | null): void {
  index.entries.set(key, { bytes, expiresAt });
  index.total += bytes;
}

async function removeEntry({ storage, index, log }: BudgetStore, key: string): Promise<void> {
  forgetEntry(index, key);
  await storage
    .removeItem(key)
    .catch((error: unknown) =>
      log.warn(`[cache] could not delete ${key}: ${error instanceof Error ? error.message : String(error)}`),
    );
}

/** Removes the least recently used entries (but `keep`) until the total is within maxBytes. */
async function evictOverCap(store: BudgetStore, maxBytes: number, keep?: string): Promise<void> {
  for (const key of store.index.entries.keys()) {
    if (store.index.total <= maxBytes) break;
    if (key !== keep) await removeEntry(store, key);
  }
}

async function sweepExpired(store: BudgetStore, now: () => number): Promise<void> {
  const expired = [...store.index.entries]
    .filter(([, entry]) => entry.expiresAt !== null && entry.expiresAt <= now())
    .map(([key]) => key);
  for (const key of expired) await removeEntry(store, key);
}

/**
 * Entries already on disk: sizes from the file system, expiry from the entry itself (read once),
 * oldest first. The caches of FORMER_CACHES are deleted on the way.
 */
async function readStoredEntries(storage: Storage) {
  const limit = pLimit(8);
  for (const former of FORMER_CACHES)
    await Promise.all((await storage.getKeys(former)).map((key) => limit(() => storage.removeItem(key))));
  const found = await Promise.all(
    (await storage.getKeys(CACHE_PREFIX)).map((key) =>
      limit(async () => {
        const [meta, value] = await Promise.all([storage.getMeta(key), storage.getItemRaw(key)]);
        const parsed = StoredEntry.safeParse(value);
        return {
          key,
          bytes: Number(meta.size ?? 0),
          usedAt: meta.mtime?.getTime() ?? 0,
          expiresAt: parsed.success ? parsed.data.expiresAt : 0,
        };
      }),
    ),
  );
  return found.sort((a, b) => a.usedAt - b.usedAt);
}

/** Rebuilds the index from storage at start, then sweeps the expired entries and evicts over the cap. */
async function indexStoredCaches(store: BudgetStore, maxBytes: number, now: () => number): Promise<void> {
  for (const entry of await readStoredEntries(store.storage)) {
    if (store.index.entries.has(entry.key)) continue; // written since start: that is newer
    recordEntry(store.index, entry.key, entry.bytes, entry.expiresAt);
  }
  await sweepExpired(store, now);
  await evictOverCap(store, maxBytes);
}

/**
 * CACHE_MAX_BYTES over every cache of the embedded store (Redis caches expire by their TTL and by
 * Redis' own memory policy): an index of the entries in least-recently-used order, with their size
 * and expiry, rebuilt from storage at start (and the expired entries swept then and every 10
 * minutes). Only this process writes the embedded store's caches, so the index is the truth.
 */
export function createCacheBudget(
  storage: Storage,
  { maxBytes, now = Date.now, log = STDERR_LINES }: { maxBytes: number; now?: () => number; log?: Log },
): CacheBudget {
  const store: BudgetStore = { storage, index: { entries: new Map(), total: 0 }, log };
  const { entries } = store.index;
  void indexStoredCaches(store, maxBytes, now).catch((error: unknown) =>
    log.warn(`[cache] could not index the stored caches: ${error instanceof Error ? error.message : String(error)}`),
  );
  const timer = setInterval(() => void sweepExpired(store, now).catch(() => {}), SWEEP_EVERY_MS);
  timer.unref();

  return {
    fits: (bytes) => bytes <= maxBytes,
    used(key) {
      const entry = entries.get(key);
      if (!entry) return;
      entries.delete(key);
      entries.set(key, entry);
    },
    async stored(key, bytes, expiresAt) {
      forgetEntry(store.index, key);
      recordEntry(store.index, key, bytes, expiresAt);
      await evictOverCap(store, maxBytes, key);
    },
    stop: () => clearInterval(timer),
  };
}
