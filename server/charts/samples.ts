import { ReplyError, type Redis } from 'ioredis';
import pLimit, { type LimitFunction } from 'p-limit';
import { z } from 'zod';
import { StorageUnavailableError, redisKey, type Storage } from '../storage.ts';
import type { HourBucket } from './aggregate.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
export const RETENTION_DAYS = 365;

/** One UTC day of a server: hour of day -> [max, sum, count] of its samples. */
export const DayRecord = z.record(z.string().regex(/^(?:[01]?\d|2[0-3])$/), z.tuple([z.int().nonnegative(), z.int().nonnegative(), z.int().positive()]));
type DayRecord = z.infer<typeof DayRecord>;

export type Sample = { at: number; players: number };

/** When a stored day leaves the 365-day window (Unix seconds): Redis drops it then. */
export function dayExpiresAt(day: number): number {
  return ((day + RETENTION_DAYS + 2) * DAY) / 1000;
}

/**
 * Folds samples into one stored day in a single step inside Redis, so origins ingesting for the
 * same server at once lose nothing. The day stays the JSON the storage driver reads and writes.
 * KEYS[1]: the day's key; ARGV[1]: when it leaves retention (Unix seconds); then hour, players pairs.
 */
const FOLD_IN_REDIS = `
local raw = redis.call('GET', KEYS[1])
local day = {}
if raw then day = cjson.decode(raw) end
for i = 2, #ARGV, 2 do
  local hour, players = ARGV[i], tonumber(ARGV[i + 1])
  local bucket = day[hour]
  if bucket then
    day[hour] = { math.max(bucket[1], players), bucket[2] + players, bucket[3] + 1 }
  else
    day[hour] = { players, players, 1 }
  end
end
redis.call('SET', KEYS[1], cjson.encode(day), 'EXAT', ARGV[1])
return 1`;

type FoldingRedis = Redis & { foldPlayerSamples(key: string, expiresAt: number, ...hoursAndPlayers: number[]): Promise<number> };

/**
 * Player counts folded into hourly buckets, one storage item per server and UTC day. With Redis
 * (every origin's state), a day is folded atomically by a script in Redis; in the embedded store,
 * updates of one day are serialised in this process (read, fold, write). A write has finished when
 * `add` resolves, so an answered sample survives a crash.
 */
export function sampleStore(storage: Storage, redis?: Redis) {
  if (redis && !('foldPlayerSamples' in redis)) redis.defineCommand('foldPlayerSamples', { numberOfKeys: 1, lua: FOLD_IN_REDIS });
  const queues = new Map<string, LimitFunction>();
  const serialised = async (key: string, update: () => Promise<void>) => {
    const queue = queues.get(key) ?? pLimit(1);
    queues.set(key, queue);
    try {
      await queue(update);
    } finally {
      if (queue.activeCount === 0 && queue.pendingCount === 0) queues.delete(key);
    }
  };
  const dayKey = (serverId: string, day: number) => `samples:${serverId}:${day}`;
  const readDay = async (key: string): Promise<DayRecord> => {
    const parsed = DayRecord.safeParse(await storage.getItem(key));
    return parsed.success ? parsed.data : {};
  };

  return {
    async add(serverId: string, samples: readonly Sample[]): Promise<void> {
      const byDay = new Map<number, Sample[]>();
      for (const sample of samples) {
        const day = Math.floor(sample.at / DAY);
        byDay.set(day, [...(byDay.get(day) ?? []), sample]);
      }
      const hourOf = (at: number) => Math.floor((at % DAY) / HOUR);
      if (redis) {
        await Promise.all(
          [...byDay].map(([day, daySamples]) =>
            // Retention: Redis drops the day once it has left the 365-day window.
            (redis as FoldingRedis)
              .foldPlayerSamples(redisKey(dayKey(serverId, day)), dayExpiresAt(day), ...daySamples.flatMap((s) => [hourOf(s.at), s.players]))
              .catch((error: unknown) => Promise.reject(error instanceof ReplyError ? error : new StorageUnavailableError(error))),
          ),
        );
        return;
      }
      await Promise.all(
        [...byDay].map(([day, daySamples]) =>
          serialised(dayKey(serverId, day), async () => {
            const record = await readDay(dayKey(serverId, day));
            for (const { at, players } of daySamples) {
              const hour = String(hourOf(at));
              const [max, sum, count] = record[hour] ?? [0, 0, 0];
              record[hour] = [Math.max(max, players), sum + players, count + 1];
            }
            await storage.setItem(dayKey(serverId, day), record);
            // Retention: the day that has just left the 365-day window goes.
            await storage.removeItem(dayKey(serverId, day - RETENTION_DAYS - 1));
          }),
        ),
      );
    },
    /** Hourly buckets from `from` to `to` (epoch ms), oldest first. */
    async range(serverId: string, from: number, to: number): Promise<HourBucket[]> {
      const days: number[] = [];
      for (let day = Math.floor(from / DAY); day <= Math.floor(to / DAY); day++) days.push(day);
      const items = await storage.getItems(days.map((day) => dayKey(serverId, day)));
      const byKey = new Map(items.map((item) => [item.key, item.value]));
      return days.flatMap((day) => {
        const parsed = DayRecord.safeParse(byKey.get(dayKey(serverId, day)));
        if (!parsed.success) return [];
        return Object.entries(parsed.data)
          .map(([hour, [max, sum, count]]) => ({ hour: day * DAY + Number(hour) * HOUR, max, sum, count }))
          .sort((a, b) => a.hour - b.hour);
      });
    },
  };
}
export type SampleStore = ReturnType<typeof sampleStore>;
