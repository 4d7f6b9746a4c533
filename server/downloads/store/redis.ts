import type { Redis } from 'ioredis';
import { redisKey, unavailable } from '../../storage.ts';
import type { Counted } from '../counted.ts';
import { DigestSet } from '../digest-set.ts';
import { countInRedis } from './redis-count.ts';
import {
  CountedDays,
  DAYS_KEY,
  DayCounts,
  SEEN_DAYS,
  countsKey,
  dayCountsOf,
  isCountable,
  parsedOr,
  type DayCount,
  type DayCounter,
} from './contract.ts';

/**
 * Download counts in Redis (REDIS_URL): a script per day's batch (redis-count.ts, beside it), atomic across
 * origins; a day past counting is read and parsed once per process.
 */
export function redisDayCounter(redis: Redis, { exactClients }: { exactClients: number }): DayCounter {
  /** Days that can no longer change, parsed once: never read again. */
  const closed = new Map<number, DayCount[]>();
  /** The newest day's digests this process has stored (up to the exact bound), so that their repeats are not sent again. */
  let stored = { day: -1, digests: new DigestSet() };

  const remember = (day: number, downloads: Counted[]) => {
    if (day > stored.day) stored = { day, digests: new DigestSet() };
    if (day !== stored.day) return;
    for (const download of downloads) {
      if (stored.digests.size >= exactClients) break;
      stored.digests.add(download);
    }
  };

  const countsOfDay = async (day: number, today: number): Promise<DayCount[]> => {
    const known = closed.get(day);
    if (known) return known;
    const record = await redis.hgetall(redisKey(countsKey(day))).catch(unavailable);
    const counts = dayCountsOf(day, parsedOr(DayCounts, record, {}, countsKey(day)));
    if (!isCountable(day, today) && day < today) closed.set(day, counts);
    return counts;
  };

  return {
    isCounted: (day, digest) => stored.day === day && stored.digests.has(digest),
    async addDay(day, downloads) {
      const added = await countInRedis(redis, { counts: countsKey(day), days: DAYS_KEY }, day, downloads, {
        ttlSeconds: SEEN_DAYS * 86_400,
        exactClients,
      });
      remember(day, downloads);
      return added;
    },
    async readDays(today) {
      const listed = (await redis.smembers(redisKey(DAYS_KEY)).catch(unavailable)).map(Number);
      const days = parsedOr(CountedDays, listed, [], DAYS_KEY);
      return Promise.all(days.map((day) => countsOfDay(day, today)));
    },
  };
}
