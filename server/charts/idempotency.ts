import type { Redis } from 'ioredis';
import pLimit, { type LimitFunction } from 'p-limit';
import { z } from 'zod';
import { sha256Hex } from '../digest.ts';
import { StorageUnavailableError, redisKey, type Storage } from '../storage.ts';
import { DAY } from '../duration.ts';

/** An ingestion's Idempotency-Key is remembered this long per server. */
const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;
/** Redis: a claim whose request died unanswered lets a retry through after this long. */
const CLAIM_MS = 60_000;
/**
 * New Idempotency-Keys a server may store per UTC day (one keyed request every 8.6 s all day): past
 * it, keyed ingestion answers 429 until midnight UTC, so one key holder cannot fill the store.
 */
export const MAX_KEYS_PER_DAY = 10_000;

/** Idempotency-Key: what a client may send (Stripe's limit of 255, printable ASCII). */
export const IdempotencyKey = z
  .string()
  .regex(/^[\x20-\x7e]{1,255}$/, { error: 'Idempotency-Key must be 1 to 255 printable ASCII characters' });

/** The embedded store's record of one key: when it was first stored, and the digest of its body. */
const RememberedKey = z.strictObject({ at: z.number(), body: z.string().regex(/^[0-9a-f]{32}$/) });
type RememberedKey = z.infer<typeof RememberedKey>;

/**
 * stored: `store` ran now; replayed: the key was used with this body before, nothing ran again;
 * conflict: the key was used with another body; in-progress: another origin is storing it (Redis);
 * capped: the server has stored MAX_KEYS_PER_DAY new keys today, nothing ran.
 */
export type Outcome = 'stored' | 'replayed' | 'conflict' | 'in-progress' | 'capped';

const digest = (text: string) => sha256Hex(text).slice(0, 32);

/**
 * Claims a key in Redis in one step: an existing claim or outcome is answered as it is; a new key
 * past the day's cap is refused; else the key is claimed and counted for the day.
 * KEYS[1]: the key's slot; KEYS[2]: the server's count of the day. ARGV: claim value, claim ms,
 * cap, count's expiry in seconds. Returns the slot's value, 'capped' or 'claimed'.
 */
const CLAIM_IN_REDIS = `
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
if tonumber(redis.call('GET', KEYS[2]) or '0') >= tonumber(ARGV[3]) then return 'capped' end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return 'claimed'`;

type ClaimingRedis = Redis & {
  claimIdempotencyKey(
    slot: string,
    count: string,
    claim: string,
    ms: number,
    cap: number,
    ttl: number,
  ): Promise<string>;
};

/**
 * Runs an ingestion at most once per server and Idempotency-Key within 24 hours. One small record
 * per key (Redis: a key with a TTL; files: `idempotency/<server>/<UTC day>-<key digest>`), so a
 * keyed request reads two records and writes one however many keys the server has sent. The
 * samples are written first and the key after, so a crash between the two can at worst count a
 * retry twice; it never loses an answered sample. `maxKeysPerDay`: tests lower the cap.
 */
export function idempotencyStore(
  storage: Storage,
  redis?: Redis,
  {
    maxKeysPerDay = MAX_KEYS_PER_DAY,
    warn = console.warn,
  }: { maxKeysPerDay?: number; warn?: (line: string) => void } = {},
) {
  if (redis && !('claimIdempotencyKey' in redis))
    redis.defineCommand('claimIdempotencyKey', { numberOfKeys: 2, lua: CLAIM_IN_REDIS });
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
    redis: ClaimingRedis,
    serverId: string,
    key: string,
    body: string,
    store: () => Promise<void>,
    now: number,
  ): Promise<Outcome> => {
    const slot = redisKey(`idempotency:${serverId}:${digest(key)}`);
    const count = redisKey(`idempotency:count:${serverId}:${Math.floor(now / DAY)}`);
    const unavailable = (error: unknown) => Promise.reject(new StorageUnavailableError(error));
    const claim = await redis
      .claimIdempotencyKey(slot, count, `pending ${digest(body)}`, CLAIM_MS, maxKeysPerDay, (2 * DAY) / 1000)
      .catch(unavailable);
    if (claim === 'capped') return 'capped';
    if (claim !== 'claimed') {
      const [state, bodyDigest] = claim.split(' ');
      if (state === 'pending') return 'in-progress';
      return bodyDigest === digest(body) ? 'replayed' : 'conflict';
    }
    try {
      await store();
    } catch (error) {
      // Nothing was stored: the key is free for the retry, and does not count.
      await redis.del(slot).catch(() => {});
      await redis.decr(count).catch(() => {});
      throw error;
    }
    await redis.set(slot, `done ${digest(body)}`, 'PX', IDEMPOTENCY_WINDOW_MS).catch(unavailable);
    return 'stored';
  };

  // The embedded store has one origin: this process counts each server's keys of the day, from
  // the day's folder the first time, then as it stores them.
  const counted = new Map<string, { day: number; keys: number }>();
  const recordKey = (serverId: string, day: number, key: string) => `idempotency:${serverId}:${day}-${digest(key)}`;
  /** The keys `serverId` stored today; on a server's first keyed request of a day, sweeps its days past the window. */
  const keysToday = async (serverId: string, today: number): Promise<{ day: number; keys: number }> => {
    const known = counted.get(serverId);
    if (known?.day === today) return known;
    // Before per-key records, all of a server's keys were one file, `idempotency/<server>`: its
    // keys are dropped (they lived 24 hours) and the name becomes the server's folder.
    await storage.removeItem(`idempotency:${serverId}`);
    const stored = await storage.getKeys(`idempotency:${serverId}`);
    const dayOf = (stored: string) => Number(stored.split(':')[2]!.split('-')[0]);
    const limit = pLimit(8);
    await Promise.all(
      stored.filter((key) => dayOf(key) < today - 1).map((key) => limit(() => storage.removeItem(key).catch(() => {}))), // swept again tomorrow
    );
    const keys = stored.filter((key) => dayOf(key) === today).length;
    const fresh = { day: today, keys };
    counted.set(serverId, fresh);
    return fresh;
  };
  /** The key's record from today or yesterday, if it is still within 24 hours. */
  const remembered = async (serverId: string, key: string, now: number): Promise<RememberedKey | null> => {
    const today = Math.floor(now / DAY);
    for (const day of [today, today - 1]) {
      const parsed = RememberedKey.safeParse(await storage.getItem(recordKey(serverId, day, key)));
      if (parsed.success && parsed.data.at > now - IDEMPOTENCY_WINDOW_MS) return parsed.data;
    }
    return null;
  };

  return {
    maxKeysPerDay,
    /** `body`: the request's JSON, as the client means it (a repeat must match it); `now`: the clock, for the 24 hours. */
    async once(serverId: string, key: string, body: string, store: () => Promise<void>, now: number): Promise<Outcome> {
      if (redis) return onceInRedis(redis as ClaimingRedis, serverId, key, body, store, now);
      // One ingestion with a key per server at a time: a repeat waits for the first, then replays.
      return serialised(serverId, async () => {
        const earlier = await remembered(serverId, key, now);
        if (earlier) return earlier.body === digest(body) ? 'replayed' : 'conflict';
        const today = Math.floor(now / DAY);
        const count = await keysToday(serverId, today);
        if (count.keys >= maxKeysPerDay) return 'capped';
        await store();
        count.keys++;
        // The samples are stored: the answer says so even when the key cannot be (a full disk),
        // since an error would make the client retry and count them twice for certain.
        await storage
          .setItem(recordKey(serverId, today, key), { at: now, body: digest(body) })
          .catch((error: unknown) =>
            warn(
              `[ingest] stored samples of server ${serverId}, but not their Idempotency-Key (a retry would count them again): ${error instanceof Error ? error.message : String(error)}`,
            ),
          );
        return 'stored';
      });
    },
  };
}
export type IdempotencyStore = ReturnType<typeof idempotencyStore>;
