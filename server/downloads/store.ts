import type { Redis } from 'ioredis';
import { z } from 'zod';
import { parseFile } from '../data-files.ts';
import { sha256Hex } from '../digest.ts';
import { StorageUnavailableError, redisKey, withKeyLock, type Storage } from '../storage.ts';
import { PLUGIN_VERSION_ID } from '../versions/schema.ts';
import { SERVER_SOFTWARE, type ServerSoftware } from '../versions/software.ts';

/** One counted answer: a JAR served whole or in part (GET, 200 or 206) to one client on one UTC day. */
export type Download = {
  /** Days since the Unix epoch, UTC. */
  day: number;
  versionId: string;
  /** The software the URL named (latest, resolve); undefined for a download by id. */
  software: ServerSoftware | undefined;
  /** The client's counting key: an IPv4 address, an IPv6 /64 (clientKey). */
  client: string;
};

/** A count's field: `<version id> <software>`, `-` for a download by id. */
const FIELD = new RegExp(`^(${PLUGIN_VERSION_ID.source.slice(1, -1)}) (-|${SERVER_SOFTWARE.join('|')})$`);
const fieldOf = (download: Download) => `${download.versionId} ${download.software ?? '-'}`;

/** One day's counts as stored: field -> downloads. */
const DayCounts = z.record(z.string().regex(FIELD), z.coerce.number().int().nonnegative());
/** The days that have counts (the embedded store cannot list a folder's keys alone). */
const CountedDays = z.array(z.int().nonnegative());
/** Who was counted on a day: digests of (day, version, client); kept SEEN_DAYS days, never the address itself. */
const SeenDigests = z.array(z.string().regex(/^[0-9a-f]{16}$/));

/** A day's downloads of one version and software (undefined: by id). */
export type DayCount = { day: number; versionId: string; software: ServerSoftware | undefined; downloads: number };

/** A download counts once per client, version and UTC day; the digest names that without the address. */
const seenDigest = (download: Download) =>
  sha256Hex(`${download.day} ${download.versionId} ${download.client}`).slice(0, 16);

/**
 * How many days (today included) a day's seen digests are kept: late batches, and `depot counts
 * import` of a week's rotated logs, count each client once however often they are imported.
 */
export const SEEN_DAYS = 8;

/** May a download of `day` still be counted exactly once? Its seen digests are kept until then. */
export function isCountable(day: number, today: number): boolean {
  return day > today - SEEN_DAYS && day <= today;
}

/**
 * Adds each new client of a day to its set and counts it in one step inside Redis, so origins
 * counting at once lose nothing and count a client once between them.
 * KEYS: the day's counts (hash), its seen digests (set), the counted days (set).
 * ARGV: the day, the seen set's lifetime (seconds), then digest, field pairs.
 */
const COUNT_IN_REDIS = `
local added = 0
for i = 3, #ARGV, 2 do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
    redis.call('HINCRBY', KEYS[1], ARGV[i + 1], 1)
    added = added + 1
  end
end
redis.call('EXPIRE', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[1])
return added`;

type CountingRedis = Redis & {
  countDownloads(
    counts: string,
    seen: string,
    days: string,
    day: number,
    ttl: number,
    ...pairs: string[]
  ): Promise<number>;
};

const DAYS_KEY = 'downloads:days';
const countsKey = (day: number) => `downloads:counts:${day}`;
const seenKey = (day: number) => `downloads:seen:${day}`;

/**
 * Download counts per UTC day, version and software, deduplicated per client, version and day.
 * Redis (REDIS_URL): a script per day's batch, atomic across origins. The embedded store: per day,
 * the counts and the seen digests are read, added to and written (each atomically) under the
 * day's file lock; the counts first, so a crash between the two can count a retry again but never
 * loses a count.
 */
export function downloadStore(storage: Storage, redis?: Redis) {
  if (redis && !('countDownloads' in redis))
    redis.defineCommand('countDownloads', { numberOfKeys: 3, lua: COUNT_IN_REDIS });

  const addInRedis = async (redis: CountingRedis, day: number, downloads: Download[]) => {
    const pairs = downloads.flatMap((download) => [seenDigest(download), fieldOf(download)]);
    const keys = [countsKey(day), seenKey(day), DAYS_KEY].map(redisKey) as [string, string, string];
    return redis
      .countDownloads(...keys, day, SEEN_DAYS * 86_400, ...pairs)
      .catch((error: unknown) =>
        Promise.reject(
          error instanceof Error && error.name === 'ReplyError' ? error : new StorageUnavailableError(error),
        ),
      );
  };

  const addToFiles = (day: number, downloads: Download[]) =>
    withKeyLock(storage, countsKey(day), async () => {
      const [days, counts, seen] = await Promise.all([
        storage.getItem(DAYS_KEY).then((value) => parsedOr(CountedDays, value, [], DAYS_KEY)),
        storage.getItem(countsKey(day)).then((value) => parsedOr(DayCounts, value, {}, countsKey(day))),
        storage.getItem(seenKey(day)).then((value) => new Set(parsedOr(SeenDigests, value, [], seenKey(day)))),
      ]);
      let added = 0;
      for (const download of downloads) {
        const digest = seenDigest(download);
        if (seen.has(digest)) continue;
        seen.add(digest);
        const field = fieldOf(download);
        counts[field] = (counts[field] ?? 0) + 1;
        added++;
      }
      if (added === 0) return 0;
      // A day listed before its counts exist reads as zero; counts never go unlisted.
      if (!days.includes(day)) await withKeyLock(storage, DAYS_KEY, () => addDay(day));
      await storage.setItem(countsKey(day), counts);
      await storage.setItem(seenKey(day), [...seen]);
      await storage.removeItem(seenKey(day - SEEN_DAYS)).catch(() => {}); // a leftover set is only bytes
      return added;
    });

  const addDay = async (day: number) => {
    const days = parsedOr(CountedDays, await storage.getItem(DAYS_KEY), [], DAYS_KEY);
    if (!days.includes(day)) await storage.setItem(DAYS_KEY, [...days, day]);
  };

  return {
    /** Counts each download not yet counted for its client, version and day; resolves how many were new. */
    async add(downloads: readonly Download[]): Promise<number> {
      const byDay = new Map<number, Download[]>();
      for (const download of downloads) byDay.set(download.day, [...(byDay.get(download.day) ?? []), download]);
      let added = 0;
      for (const [day, ofDay] of byDay)
        added += redis ? await addInRedis(redis as CountingRedis, day, ofDay) : await addToFiles(day, ofDay);
      return added;
    },
    /** Every stored count, by day, version and software. */
    async read(): Promise<DayCount[]> {
      const days = redis
        ? parsedOr(CountedDays, (await redis.smembers(redisKey(DAYS_KEY)).catch(unavailable)).map(Number), [], DAYS_KEY)
        : parsedOr(CountedDays, await storage.getItem(DAYS_KEY), [], DAYS_KEY);
      const records = redis
        ? await Promise.all(days.map((day) => redis.hgetall(redisKey(countsKey(day))).catch(unavailable)))
        : (await storage.getItems(days.map(countsKey))).map((item) => item.value);
      return days.flatMap((day, index) =>
        Object.entries(parsedOr(DayCounts, records[index], {}, countsKey(day))).map(([field, downloads]) => {
          const [, versionId, software] = FIELD.exec(field)!;
          return {
            day,
            versionId: versionId!,
            software: software === '-' ? undefined : (software as ServerSoftware),
            downloads,
          };
        }),
      );
    },
  };
}
export type DownloadStore = ReturnType<typeof downloadStore>;

const unavailable = (error: unknown) => Promise.reject(new StorageUnavailableError(error));

/**
 * Stored contents are checked like any input: absent is `fallback`; a record that is not what we
 * write throws (the read answers 500 and is logged; a batch is kept for the next try), never
 * overwritten with less.
 */
function parsedOr<T>(schema: z.ZodType<T>, value: unknown, fallback: T, key: string): T {
  if (value === null || value === undefined) return fallback;
  return parseFile(schema, value, `stored ${key}`);
}
