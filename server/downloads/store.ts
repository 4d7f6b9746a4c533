import type { Redis } from 'ioredis';
import { z } from 'zod';
import { parseFile } from '../data-files.ts';
import { DAY } from '../charts/time.ts';
import { DigestSet, digestHex, digestOfHex, seenDigest, type Digest } from './digest-set.ts';
import { journalOf } from './journal.ts';
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

/**
 * A download as the store counts it: its day, its count's field, and its seen digest in place of
 * the client (a download counts once per client, version and day).
 */
export type Counted = Digest & { day: number; field: string };

/** A count's field: `<version id> <software>`, `-` for a download by id. */
const FIELD = new RegExp(`^(${PLUGIN_VERSION_ID.source.slice(1, -1)}) (-|${SERVER_SOFTWARE.join('|')})$`);
export const countField = (versionId: string, software: ServerSoftware | undefined) =>
  `${versionId} ${software ?? '-'}`;

export const countedOf = ({ day, versionId, software, client }: Download): Counted => ({
  ...seenDigest(day, versionId, client),
  day,
  field: countField(versionId, software),
});

/** One day's counts as stored: field -> downloads. */
const DayCounts = z.record(z.string().regex(FIELD), z.coerce.number().int().nonnegative());
/** The days that have counts (the embedded store cannot list a folder's keys alone). */
const CountedDays = z.array(z.int().nonnegative());
/** A line of a day's journal (embedded store): who was counted (a seen digest) and under which field. */
const JOURNAL_LINE = new RegExp(`^([0-9a-f]{16}) (${FIELD.source.slice(1, -1)})$`);

/** A day's downloads of one version and software (undefined: by id). */
export type DayCount = { day: number; versionId: string; software: ServerSoftware | undefined; downloads: number };

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
const journalKey = (day: number) => `downloads:journal:${day}`;

/** What this process has read of a day that may still be counted: its journal up to `offset`. */
type OpenDay = { offset: number; seen: DigestSet; counts: Record<string, number> };

/**
 * Download counts per UTC day, version and software, deduplicated per client, version and day.
 * Redis (REDIS_URL): a script per day's batch, atomic across origins. The embedded store: a day
 * that may still be counted (SEEN_DAYS) is a journal, one line per counted download (its seen
 * digest and field), appended and fdatasync'ed under the day's file lock: a flush writes its batch
 * alone, a crash tears at most the last line, which readers skip and the next writer cuts off.
 * Each process keeps what it has read of a journal and reads only what was appended since (by the
 * CLI, or another origin). Once a day can no longer be counted it is closed: its counts are
 * written to one record (atomically), the journal removed, and the record read once per process.
 */
export function downloadStore(storage: Storage, redis?: Redis, now: () => number = Date.now) {
  if (redis && !('countDownloads' in redis))
    redis.defineCommand('countDownloads', { numberOfKeys: 3, lua: COUNT_IN_REDIS });
  const journal = journalOf(storage, journalKey(0));
  /** Days that can no longer change, once read: never read again. */
  const closed = new Map<number, Record<string, number>>();
  const open = new Map<number, OpenDay>();
  /** Days this process has seen listed in DAYS_KEY. */
  const listed = new Set<number>();
  /** Redis: the newest day's digests this process has stored, so that their repeats are not sent again. */
  let storedInRedis = { day: -1, digests: new DigestSet() };
  /** One piece of work at a time per day in this process (their reads of a journal would overlap). */
  const queues = new Map<number, Promise<unknown>>();
  const serially = <T>(day: number, work: () => Promise<T>): Promise<T> => {
    const next = (queues.get(day) ?? Promise.resolve()).then(work, work);
    queues.set(
      day,
      next.catch(() => {}),
    );
    return next;
  };

  const addInRedis = async (redis: CountingRedis, day: number, downloads: Counted[]) => {
    const pairs = downloads.flatMap((download) => [digestHex(download), download.field]);
    const keys = [countsKey(day), seenKey(day), DAYS_KEY].map(redisKey) as [string, string, string];
    const added = await redis
      .countDownloads(...keys, day, SEEN_DAYS * 86_400, ...pairs)
      .catch((error: unknown) =>
        Promise.reject(
          error instanceof Error && error.name === 'ReplyError' ? error : new StorageUnavailableError(error),
        ),
      );
    if (day > storedInRedis.day) storedInRedis = { day, digests: new DigestSet() };
    if (day === storedInRedis.day) for (const download of downloads) storedInRedis.digests.add(download);
    return added;
  };

  /**
   * The day's journal as far as it is whole, from where this process stopped reading. Holding the
   * day's lock (`locked`), a torn last line can only be a killed writer's: it is cut off.
   */
  const readJournal = async (day: number, locked: boolean): Promise<OpenDay> => {
    let state = open.get(day);
    if (!state) open.set(day, (state = { offset: 0, seen: new DigestSet(), counts: {} }));
    const text = await journal.readFrom(journalKey(day), state.offset);
    const whole = text.lastIndexOf('\n') + 1;
    for (const line of text.slice(0, whole).split('\n')) {
      if (line === '') continue;
      const match = JOURNAL_LINE.exec(line);
      if (!match) throw new Error(`stored ${journalKey(day)} holds a line that is not <digest> <field>: ${line}`);
      const [, hex, field] = match as unknown as [string, string, string];
      if (!state.seen.add(digestOfHex(hex))) continue;
      state.counts[field] = (state.counts[field] ?? 0) + 1;
    }
    state.offset += whole;
    if (locked && whole < text.length) await journal.truncate(journalKey(day), state.offset);
    return state;
  };

  const addToFiles = (day: number, downloads: Counted[]) =>
    serially(day, () =>
      withKeyLock(storage, journalKey(day), async () => {
        // A closed day is past counting (a batch held back longer than SEEN_DAYS).
        if (closed.has(day) || (await storage.hasItem(countsKey(day)))) return 0;
        const state = await readJournal(day, true);
        const added = downloads.filter((download) => state.seen.add(download));
        if (added.length === 0) return 0;
        try {
          // A day listed before its journal exists reads as zero; counts never go unlisted.
          if (!listed.has(day)) await withKeyLock(storage, DAYS_KEY, () => addDay(day));
          const lines = added.map((download) => `${digestHex(download)} ${download.field}\n`).join('');
          await journal.append(journalKey(day), lines);
          state.offset += lines.length;
        } catch (error) {
          // The batch is retried; what this process knows of the day is read again from the journal
          // (which holds a half-written append's whole lines), as the seen digests took in the batch.
          open.delete(day);
          throw error;
        }
        for (const { field } of added) state.counts[field] = (state.counts[field] ?? 0) + 1;
        return added.length;
      }),
    );

  const addDay = async (day: number) => {
    const days = parsedOr(CountedDays, await storage.getItem(DAYS_KEY), [], DAYS_KEY);
    if (!days.includes(day)) await storage.setItem(DAYS_KEY, [...days, day]);
    listed.add(day);
  };

  /** A closed day's counts: its record, written once from the journal by whoever reads it first. */
  const closeDay = (day: number) =>
    serially(day, () =>
      withKeyLock(storage, journalKey(day), async () => {
        const stored = await storage.getItem(countsKey(day));
        let counts = parsedOr(DayCounts, stored, {}, countsKey(day));
        if (stored === null) {
          counts = (await readJournal(day, true)).counts;
          await storage.setItem(countsKey(day), counts);
          await journal.remove(journalKey(day));
        }
        open.delete(day);
        return counts;
      }),
    );

  /** A day's counts from the files: closed days from memory once read, open ones from the journal's new lines. */
  const countsFromFiles = async (day: number, today: number): Promise<Record<string, number>> => {
    const known = closed.get(day);
    if (known) return known;
    // Closed by a process whose clock is ahead is closed too.
    const counting = (isCountable(day, today) || day > today) && !(await storage.hasItem(countsKey(day)));
    if (counting) return { ...(await serially(day, () => readJournal(day, false))).counts };
    const counts = await closeDay(day);
    closed.set(day, counts);
    return counts;
  };

  /** A day's counts in Redis; a day past counting is read once. */
  const countsFromRedis = async (redis: Redis, day: number, today: number): Promise<unknown> => {
    const known = closed.get(day);
    if (known) return known;
    const counts = await redis.hgetall(redisKey(countsKey(day))).catch(unavailable);
    if (!isCountable(day, today) && day < today) closed.set(day, parsedOr(DayCounts, counts, {}, countsKey(day)));
    return counts;
  };

  return {
    /**
     * Is this download counted already, as far as this process knows without asking the store: it
     * stored it, or read it from the day's journal. A cheap check before a download is queued.
     */
    isCounted(day: number, digest: Digest): boolean {
      if (redis) return storedInRedis.day === day && storedInRedis.digests.has(digest);
      return open.get(day)?.seen.has(digest) ?? false;
    },
    /** Counts each download not yet counted for its client, version and day; resolves how many were new. */
    async add(downloads: readonly Counted[]): Promise<number> {
      const byDay = new Map<number, Counted[]>();
      for (const download of downloads) {
        const ofDay = byDay.get(download.day);
        if (ofDay) ofDay.push(download);
        else byDay.set(download.day, [download]);
      }
      let added = 0;
      for (const [day, ofDay] of byDay)
        added += redis ? await addInRedis(redis as CountingRedis, day, ofDay) : await addToFiles(day, ofDay);
      return added;
    },
    /** Every stored count, by day, version and software. */
    async read(): Promise<DayCount[]> {
      const today = Math.floor(now() / DAY);
      const days = redis
        ? parsedOr(CountedDays, (await redis.smembers(redisKey(DAYS_KEY)).catch(unavailable)).map(Number), [], DAYS_KEY)
        : parsedOr(CountedDays, await storage.getItem(DAYS_KEY), [], DAYS_KEY);
      const records = await Promise.all(
        days.map((day) => (redis ? countsFromRedis(redis, day, today) : countsFromFiles(day, today))),
      );
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
