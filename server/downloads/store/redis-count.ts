import type { Redis } from 'ioredis';
import { redisKey, unavailableUnlessScriptFailed } from '../../storage.ts';
import { digestHex } from '../digest-set.ts';
import type { Counted } from '../counted.ts';

/**
 * Adds each new client of a day to its set and counts it in one step inside Redis, so origins
 * counting at once lose nothing and count a client once between them. Past the day's exact bound
 * (as SeenClients does in files) a client goes to its field's HyperLogLog (PFADD), and the count
 * takes the change of its estimate, so readers of the counts hash need to know nothing of it.
 * KEYS: the day's counts (hash), its seen digests (set), the counted days (set), the estimates
 * already in the counts (hash).
 * ARGV: the day, the seen keys' lifetime (seconds), the exact bound, the sketches' key prefix,
 * then digest, field pairs.
 */
const COUNT_IN_REDIS = `
local added = 0
local exact = tonumber(ARGV[3])
for i = 5, #ARGV, 2 do
  local digest, field = ARGV[i], ARGV[i + 1]
  if redis.call('SISMEMBER', KEYS[2], digest) == 0 then
    if redis.call('SCARD', KEYS[2]) < exact then
      redis.call('SADD', KEYS[2], digest)
      redis.call('HINCRBY', KEYS[1], field, 1)
      added = added + 1
    else
      local sketch = ARGV[4] .. field
      if redis.call('PFADD', sketch, digest) == 1 then
        local estimate = redis.call('PFCOUNT', sketch)
        local before = tonumber(redis.call('HGET', KEYS[4], field) or '0')
        redis.call('HINCRBY', KEYS[1], field, estimate - before)
        redis.call('HSET', KEYS[4], field, estimate)
        added = added + estimate - before
      end
      redis.call('EXPIRE', sketch, ARGV[2])
    end
  end
end
redis.call('EXPIRE', KEYS[2], ARGV[2])
redis.call('EXPIRE', KEYS[4], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[1])
return added`;

type CountingRedis = Redis & {
  countDownloads(
    counts: string,
    seen: string,
    days: string,
    estimates: string,
    day: number,
    ttl: number,
    exact: number,
    sketches: string,
    ...pairs: string[]
  ): Promise<number>;
};

/** The keys of a day's counting in Redis (storage keys; the script gets them as Redis keys). */
const redisDayKeys = (day: number) => ({
  seen: `downloads:seen:${day}`,
  estimates: `downloads:estimated:${day}`,
  sketches: `downloads:sketch:${day}:`,
});

/** Counts a day's batch in Redis; resolves how many downloads it added (estimated past the bound). */
export async function countInRedis(
  redis: Redis,
  keys: { counts: string; days: string },
  day: number,
  downloads: readonly Counted[],
  options: { ttlSeconds: number; exactClients: number },
): Promise<number> {
  if (!('countDownloads' in redis)) redis.defineCommand('countDownloads', { numberOfKeys: 4, lua: COUNT_IN_REDIS });
  const { seen, estimates, sketches } = redisDayKeys(day);
  const pairs = downloads.flatMap((download) => [digestHex(download), download.field]);
  return (redis as CountingRedis)
    .countDownloads(
      redisKey(keys.counts),
      redisKey(seen),
      redisKey(keys.days),
      redisKey(estimates),
      day,
      options.ttlSeconds,
      options.exactClients,
      redisKey(sketches),
      ...pairs,
    )
    .catch(unavailableUnlessScriptFailed);
}
