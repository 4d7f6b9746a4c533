import type { Redis } from 'ioredis';
import { redisKey, unavailableUnlessScriptFailed, type Storage } from '../../storage.ts';
import {
  corruptDayLine,
  dayExpiresAt,
  dayKey,
  hourOf,
  readRange,
  samplesByDay,
  stampOf,
  type SampleStore,
} from './contract.ts';
import type { Log } from '../../helpers/log.ts';

/**
 * Folds samples into one stored day in a single step inside Redis, so origins ingesting for the
 * same server at once lose nothing. The day stays the JSON the storage driver reads and writes; a
 * day that is not a day record is kept aside under `<key>.corrupt-<stamp>` (answer 2), never folded over.
 * KEYS[1]: the day's key; ARGV[1]: when it leaves retention (Unix seconds); ARGV[2]: the stamp;
 * then hour, players pairs.
 */
const FOLD_IN_REDIS = `
local raw = redis.call('GET', KEYS[1])
local day = {}
local answer = 1
if raw then
  local ok, decoded = pcall(cjson.decode, raw)
  local valid = ok and type(decoded) == 'table'
  if valid then
    for hour, bucket in pairs(decoded) do
      local h = tonumber(hour)
      if not h or h ~= math.floor(h) or h < 0 or h > 23 or type(bucket) ~= 'table'
        or type(bucket[1]) ~= 'number' or type(bucket[2]) ~= 'number' or type(bucket[3]) ~= 'number' then
        valid = false
      end
    end
  end
  if valid then day = decoded else
    redis.call('SET', KEYS[1] .. '.corrupt-' .. ARGV[2], raw)
    answer = 2
  end
end
for i = 3, #ARGV, 2 do
  local hour, players = ARGV[i], tonumber(ARGV[i + 1])
  local bucket = day[hour]
  if bucket then
    day[hour] = { math.max(bucket[1], players), bucket[2] + players, bucket[3] + 1 }
  else
    day[hour] = { players, players, 1 }
  end
end
redis.call('SET', KEYS[1], cjson.encode(day), 'EXAT', ARGV[1])
return answer`;

type FoldingRedis = Redis & {
  foldPlayerSamples(key: string, expiresAt: number, stamp: string, ...hoursAndPlayers: number[]): Promise<number>;
};

/**
 * Samples in Redis (every origin's state): a day is folded atomically by a script in Redis, and
 * Redis drops it once it has left the 365-day window. Read back through the storage driver.
 */
export function redisSampleStore(storage: Storage, redis: Redis, log: Log): SampleStore {
  if (!('foldPlayerSamples' in redis))
    redis.defineCommand('foldPlayerSamples', { numberOfKeys: 1, lua: FOLD_IN_REDIS });
  const folding = redis as FoldingRedis;
  return {
    async add(serverId, samples) {
      const stamp = stampOf(new Date());
      const foldDay = async (day: number, daySamples: readonly { at: number; players: number }[]) => {
        const key = dayKey(serverId, day);
        const pairs = daySamples.flatMap((s) => [hourOf(s.at), s.players]);
        const answer = await folding
          .foldPlayerSamples(redisKey(key), dayExpiresAt(day), stamp, ...pairs)
          .catch(unavailableUnlessScriptFailed);
        if (answer === 2) log.warn(corruptDayLine(key, `${key}.corrupt-${stamp}`));
      };
      await Promise.all([...samplesByDay(samples)].map(([day, daySamples]) => foldDay(day, daySamples)));
    },
    range: (serverId, from, to) => readRange(storage, serverId, from, to),
  };
}
