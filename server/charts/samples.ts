import type { Redis } from 'ioredis';
import { z } from 'zod';
import { StorageUnavailableError, redisKey, withKeyLock, type Storage } from '../storage.ts';
import type { HourBucket } from './aggregate.ts';
import { DAY, HOUR } from '../duration.ts';

export const RETENTION_DAYS = 365;

/** One UTC day of a server: hour of day -> [max, sum, count] of its samples. */
export const DayRecord = z.record(
  z.string().regex(/^(?:[01]?\d|2[0-3])$/),
  z.tuple([z.int().nonnegative(), z.int().nonnegative(), z.int().positive()]),
);
type DayRecord = z.infer<typeof DayRecord>;

export type Sample = { at: number; players: number };

/** When a stored day leaves the 365-day window (Unix seconds): Redis drops it then. */
export function dayExpiresAt(day: number): number {
  return ((day + RETENTION_DAYS + 2) * DAY) / 1000;
}

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

/** `20261120T123000123Z`: when a corrupt day was moved aside, in a name without the key separator. */
const stampOf = (date: Date) => date.toISOString().replace(/[-:.]/g, '');

/**
 * Player counts folded into hourly buckets, one storage item per server and UTC day. With Redis
 * (every origin's state), a day is folded atomically by a script in Redis. In the embedded store a
 * day is read, folded and written whole (atomically) under the day's file lock, which the CLI takes
 * too; samples for a day that arrive while it is being written wait and go together into its next
 * write (group commit), so durability costs one write per busy day, not per sample. `add`
 * resolves once a write holding all its samples is on disk: an answered sample survives a crash.
 * A stored day that does not parse (a torn or hand-edited file) is never replaced: it is moved aside
 * to `<day>.corrupt-<stamp>`, said once by `warn`, and the day starts afresh.
 */
export function sampleStore(storage: Storage, redis?: Redis, warn: (line: string) => void = console.warn) {
  if (redis && !('foldPlayerSamples' in redis))
    redis.defineCommand('foldPlayerSamples', { numberOfKeys: 1, lua: FOLD_IN_REDIS });
  const dayKey = (serverId: string, day: number) => `samples:${serverId}:${day}`;
  const hourOf = (at: number) => Math.floor((at % DAY) / HOUR);

  type Waiting = { samples: Sample[]; written: (error?: unknown) => void };
  /** Per day key: samples waiting for the day's next write, and whether a write is running. */
  const days = new Map<string, { waiting: Waiting[]; writing: boolean }>();
  const writeDay = async (key: string, retiredKey: string, group: Waiting[]) => {
    await withKeyLock(storage, key, async () => {
      const stored = await storage.getItem(key);
      // A file holding `null` reads as null too: only a day that is not there at all starts empty.
      const absent = stored === null && !(await storage.hasItem(key));
      const parsed = DayRecord.safeParse(absent ? {} : stored);
      if (!parsed.success) await moveAside(key);
      const record: DayRecord = parsed.success ? parsed.data : {};
      for (const { at, players } of group.flatMap((waiting) => waiting.samples)) {
        const hour = String(hourOf(at));
        const [max, sum, count] = record[hour] ?? [0, 0, 0];
        record[hour] = [Math.max(max, players), sum + players, count + 1];
      }
      await storage.setItem(key, record);
    });
    // Retention: the day that has just left the 365-day window goes.
    await storage.removeItem(retiredKey).catch(() => {}); // a leftover day is harmless: range() never reads it
  };
  /** Keeps the bytes of a day that does not parse beside it (before the day is written anew), and says so. */
  const moveAside = async (key: string) => {
    const aside = `${key}.corrupt-${stampOf(new Date())}`;
    await storage.setItemRaw(aside, await storage.getItemRaw(key));
    warnCorrupt(key, aside);
  };
  const warnCorrupt = (key: string, aside: string) =>
    warn(
      `[samples] the stored player counts ${key} did not parse: kept as ${aside} for inspection, the day starts afresh with the new samples`,
    );
  const drain = async (key: string, retiredKey: string) => {
    const day = days.get(key)!;
    day.writing = true;
    while (day.waiting.length > 0) {
      const group = day.waiting.splice(0);
      await writeDay(key, retiredKey, group).then(
        () => group.forEach((waiting) => waiting.written()),
        (error: unknown) => group.forEach((waiting) => waiting.written(error ?? new Error('write failed'))),
      );
    }
    days.delete(key);
  };
  const addToDay = (key: string, retiredKey: string, samples: Sample[]): Promise<void> => {
    const day = days.get(key) ?? { waiting: [], writing: false };
    days.set(key, day);
    const written = new Promise<void>((resolve, reject) =>
      day.waiting.push({ samples, written: (error) => (error ? reject(error) : resolve()) }),
    );
    if (!day.writing) void drain(key, retiredKey);
    return written;
  };

  return {
    async add(serverId: string, samples: readonly Sample[]): Promise<void> {
      const byDay = new Map<number, Sample[]>();
      for (const sample of samples) {
        const day = Math.floor(sample.at / DAY);
        byDay.set(day, [...(byDay.get(day) ?? []), sample]);
      }
      if (redis) {
        const stamp = stampOf(new Date());
        await Promise.all(
          [...byDay].map(([day, daySamples]) =>
            // Retention: Redis drops the day once it has left the 365-day window.
            (redis as FoldingRedis)
              .foldPlayerSamples(
                redisKey(dayKey(serverId, day)),
                dayExpiresAt(day),
                stamp,
                ...daySamples.flatMap((s) => [hourOf(s.at), s.players]),
              )
              .then((answer) => {
                if (answer === 2) warnCorrupt(dayKey(serverId, day), `${dayKey(serverId, day)}.corrupt-${stamp}`);
              })
              .catch((error: unknown) =>
                // A reply of Redis itself (the script failed) is a bug to report; anything else, Redis unavailable.
                Promise.reject(
                  error instanceof Error && error.name === 'ReplyError' ? error : new StorageUnavailableError(error),
                ),
              ),
          ),
        );
        return;
      }
      await Promise.all(
        [...byDay].map(([day, daySamples]) =>
          addToDay(dayKey(serverId, day), dayKey(serverId, day - RETENTION_DAYS - 1), daySamples),
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
