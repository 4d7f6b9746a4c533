import type { Redis } from 'ioredis';
import { redisKey, unavailable } from '../../storage.ts';
import { DAY } from '../../helpers/duration.ts';
import { IDEMPOTENCY_WINDOW_MS, digest, type IdempotencyStore, type Outcome } from './contract.ts';

/** A claim whose request died unanswered lets a retry through after this long. */
const CLAIM_MS = 60_000;

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
 * Redis, shared by every origin: one key per Idempotency-Key with a TTL, a claim set only if
 * absent (a script that also counts the server's keys of the day), then the outcome for 24 hours.
 */
export function redisIdempotencyStore(redis: Redis, maxKeysPerDay: number): IdempotencyStore {
  if (!('claimIdempotencyKey' in redis))
    redis.defineCommand('claimIdempotencyKey', { numberOfKeys: 2, lua: CLAIM_IN_REDIS });
  const claiming = redis as ClaimingRedis;
  return {
    maxKeysPerDay,
    async once(serverId, key, body, store, now): Promise<Outcome> {
      const slot = redisKey(`idempotency:${serverId}:${digest(key)}`);
      const count = redisKey(`idempotency:count:${serverId}:${Math.floor(now / DAY)}`);
      const claim = await claiming
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
    },
  };
}
