import type { Redis } from 'ioredis';
import pLimit, { type LimitFunction } from 'p-limit';
import { z } from 'zod';
import { sha256Hex } from '../digest.ts';
import { StorageUnavailableError, redisKey, type Storage } from '../storage.ts';

/** An ingestion's Idempotency-Key is remembered this long per server. */
const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;
/** Redis: a claim whose request died unanswered lets a retry through after this long. */
const CLAIM_MS = 60_000;

/** Idempotency-Key: what a client may send (Stripe's limit of 255, printable ASCII). */
export const IdempotencyKey = z
  .string()
  .regex(/^[\x20-\x7e]{1,255}$/, { error: 'Idempotency-Key must be 1 to 255 printable ASCII characters' });

/** The embedded store's record per server: digest of each key -> [when, digest of its body]. */
const RememberedKeys = z.record(
  z.string().regex(/^[0-9a-f]{32}$/),
  z.tuple([z.number(), z.string().regex(/^[0-9a-f]{32}$/)]),
);
type RememberedKeys = z.infer<typeof RememberedKeys>;

/**
 * stored: `store` ran now; replayed: the key was used with this body before, nothing ran again;
 * conflict: the key was used with another body; in-progress: another origin is storing it (Redis).
 */
export type Outcome = 'stored' | 'replayed' | 'conflict' | 'in-progress';

const digest = (text: string) => sha256Hex(text).slice(0, 32);

/**
 * Runs an ingestion at most once per server and Idempotency-Key within 24 hours. The samples are
 * written first and the key after, so a crash between the two can at worst count a retry twice;
 * it never loses an answered sample.
 */
export function idempotencyStore(storage: Storage, redis?: Redis) {
  const perServer = new Map<string, LimitFunction>();
  const serialised = async <T>(serverId: string, run: () => Promise<T>): Promise<T> => {
    const queue = perServer.get(serverId) ?? pLimit(1);
    perServer.set(serverId, queue);
    try {
      return await queue(run);
    } finally {
      if (queue.activeCount === 0 && queue.pendingCount === 0) perServer.delete(serverId);
    }
  };

  /** Redis, shared by every origin: a claim set only if absent, then the outcome for 24 hours. */
  const onceInRedis = async (
    redis: Redis,
    serverId: string,
    key: string,
    body: string,
    store: () => Promise<void>,
  ): Promise<Outcome> => {
    const slot = redisKey(`idempotency:${serverId}:${digest(key)}`);
    const unavailable = (error: unknown) => Promise.reject(new StorageUnavailableError(error));
    const claimed = await redis.set(slot, `pending ${digest(body)}`, 'PX', CLAIM_MS, 'NX').catch(unavailable);
    if (claimed !== 'OK') {
      const [state, bodyDigest] = ((await redis.get(slot).catch(unavailable)) ?? 'pending').split(' ');
      if (state === 'pending') return 'in-progress';
      return bodyDigest === digest(body) ? 'replayed' : 'conflict';
    }
    try {
      await store();
    } catch (error) {
      await redis.del(slot).catch(() => {});
      throw error;
    }
    await redis.set(slot, `done ${digest(body)}`, 'PX', IDEMPOTENCY_WINDOW_MS).catch(unavailable);
    return 'stored';
  };

  return {
    /** `body`: the request's JSON, as the client means it (a repeat must match it); `now`: the clock, for the 24 hours. */
    async once(serverId: string, key: string, body: string, store: () => Promise<void>, now: number): Promise<Outcome> {
      if (redis) return onceInRedis(redis, serverId, key, body, store);
      // The embedded store has one origin: one ingestion with a key per server at a time.
      return serialised(serverId, async () => {
        const recordKey = `idempotency:${serverId}`;
        const parsed = RememberedKeys.safeParse(await storage.getItem(recordKey));
        const remembered: RememberedKeys = Object.fromEntries(
          Object.entries(parsed.success ? parsed.data : {}).filter(([, [at]]) => at > now - IDEMPOTENCY_WINDOW_MS),
        );
        const earlier = remembered[digest(key)];
        if (earlier) return earlier[1] === digest(body) ? 'replayed' : 'conflict';
        await store();
        remembered[digest(key)] = [now, digest(body)];
        await storage.setItem(recordKey, remembered);
        return 'stored';
      });
    },
  };
}
export type IdempotencyStore = ReturnType<typeof idempotencyStore>;
