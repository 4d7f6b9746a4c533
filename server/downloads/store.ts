import type { Redis } from 'ioredis';
import { z } from 'zod';
import { parseFile } from '../data-files.ts';
import { DAY } from '../duration.ts';
import type { Counted } from './counted.ts';
import { DigestSet, digestHex, type Digest } from './digest-set.ts';
import { journalOf } from './journal.ts';
import { FIELD, countField, readJournalLines } from './journal-lines.ts';
import { EXACT_CLIENTS, SeenClients } from './seen-clients.ts';
import { countInRedis } from './redis-count.ts';
import { StorageUnavailableError, redisKey, withKeyLock, type Storage } from '../storage.ts';
import type { ServerSoftware } from '../versions/software.ts';

export { countField };

/** One day's counts as stored: field -> downloads. */
const DayCounts = z.record(z.string().regex(FIELD), z.coerce.number().int().nonnegative());
/** The days that have counts (the embedded store cannot list a folder's keys alone). */
const CountedDays = z.array(z.int().nonnegative());

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

const DAYS_KEY = 'downloads:days';
const countsKey = (day: number) => `downloads:counts:${day}`;
/** A day's journal in the embedded store, while the day may be counted. */
export const journalKey = (day: number) => `downloads:journal:${day}`;

/** The days that have counts, as the embedded store lists them. */
export async function countedDays(storage: Storage): Promise<number[]> {
  return parsedOr(CountedDays, await storage.getItem(DAYS_KEY), [], DAYS_KEY);
}

/** How long the total (the downloads badge) is kept before the counts are summed again, unless this process counted meanwhile. */
export const TOTAL_TTL_MS = 5000;

/** What this process has read of a day that may still be counted: its journal up to `offset`, in the file `file`. */
type OpenDay = { offset: number; file: string | undefined; seen: SeenClients };

export type DownloadStoreOptions = {
  /** Distinct clients a day counts exactly (SeenClients); approximately past them. */
  exactClients?: number;
  warn?: (line: string) => void;
};

/**
 * Download counts per UTC day, version and software, deduplicated per client, version and day.
 * Redis (REDIS_URL): a script per day's batch, atomic across origins. The embedded store: a day
 * that may still be counted (SEEN_DAYS) is a journal, one line per counted download (its seen
 * digest and field), appended whole (or cut back) and fdatasync'ed under the day's file lock: a
 * flush writes its batch alone, a crash tears at most the last line, which readers skip and the
 * next writer cuts off; a malformed line (a torn append of older versions) is skipped and said.
 * Each process keeps what it has read of a journal and reads only what was appended since (by the
 * CLI, or another origin), from its start again when the file was replaced (`counts repair`).
 * Once a day can no longer be counted it is closed: its counts are written to one record
 * (atomically), the journal removed, and the record read and parsed once per process.
 */
export function downloadStore(
  storage: Storage,
  redis?: Redis,
  now: () => number = Date.now,
  options: DownloadStoreOptions = {},
) {
  const exactClients = options.exactClients ?? EXACT_CLIENTS;
  const warn = options.warn ?? ((line: string) => console.warn(line));
  const journal = journalOf(storage, journalKey(0));
  /** Days that can no longer change, parsed once: never read again. */
  const closed = new Map<number, { counts: DayCount[]; total: number }>();
  const open = new Map<number, OpenDay>();
  /** Days this process has seen listed in DAYS_KEY. */
  const listed = new Set<number>();
  /** Journal files whose malformed lines were said (once per file). */
  const warned = new Set<string>();
  /** Redis: the newest day's digests this process has stored (up to the exact bound), so that their repeats are not sent again. */
  let storedInRedis = { day: -1, digests: new DigestSet() };
  /** Bumped when this process counts something: the total is summed again. */
  let revision = 0;
  let totalCache: { at: number; revision: number; value: Promise<number> } | undefined;
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

  const addInRedis = async (redis: Redis, day: number, downloads: Counted[]) => {
    const added = await countInRedis(redis, { counts: countsKey(day), days: DAYS_KEY }, day, downloads, {
      ttlSeconds: SEEN_DAYS * 86_400,
      exactClients,
    });
    if (day > storedInRedis.day) storedInRedis = { day, digests: new DigestSet() };
    if (day === storedInRedis.day)
      for (const download of downloads) {
        if (storedInRedis.digests.size >= exactClients) break;
        storedInRedis.digests.add(download);
      }
    return added;
  };

  /**
   * The day's journal as far as it is whole, from where this process stopped reading. Holding the
   * day's lock (`locked`), a torn last line can only be a killed writer's: it is cut off.
   */
  const readJournal = async (day: number, locked: boolean): Promise<OpenDay> => {
    const fresh = (): OpenDay => ({ offset: 0, file: undefined, seen: new SeenClients(exactClients) });
    let state = open.get(day) ?? fresh();
    let { text, file } = await journal.readFrom(journalKey(day), state.offset);
    if (state.file !== undefined && file !== state.file) {
      // Replaced (`counts repair`) or removed: what this process read of it no longer holds.
      state = fresh();
      ({ text, file } = await journal.readFrom(journalKey(day), 0));
    }
    open.set(day, state);
    state.file = file;
    const { records, malformed, whole } = readJournalLines(text);
    for (const record of records) state.seen.add(record, record.field);
    if (malformed.length > 0 && !warned.has(`${day} ${file}`)) {
      warned.add(`${day} ${file}`);
      warn(
        `[downloads] stored ${journalKey(day)} holds ${malformed.length} malformed line(s), skipped; ` +
          '`npm run depot -- counts repair` rewrites it without them',
      );
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
        const before = state.seen.total();
        const changed = downloads.filter((download) => state.seen.add(download, download.field));
        if (changed.length === 0) return 0;
        try {
          // A day listed before its journal exists reads as zero; counts never go unlisted.
          if (!listed.has(day)) await withKeyLock(storage, DAYS_KEY, () => addDay(day));
          const lines = changed.map((download) => `${digestHex(download)} ${download.field}\n`).join('');
          await journal.append(journalKey(day), lines);
          state.offset += lines.length;
        } catch (error) {
          // The batch is retried; what this process knows of the day is read again from the
          // journal, as the seen clients took in the batch (the append was cut back).
          open.delete(day);
          throw error;
        }
        return state.seen.total() - before;
      }),
    );

  const addDay = async (day: number) => {
    const days = await countedDays(storage);
    if (!days.includes(day)) await storage.setItem(DAYS_KEY, [...days, day]);
    listed.add(day);
  };

  /**
   * A closed day's counts: its record, written once from the journal by whoever reads it first.
   * `closed` false: the record could not be written (a full disk): the journal's counts are
   * answered, and the day is closed by a later read.
   */
  const closeDay = (day: number) =>
    serially(day, () =>
      withKeyLock(storage, journalKey(day), async () => {
        const stored = await storage.getItem(countsKey(day));
        if (stored !== null) {
          // A process killed between the record and the journal's removal left the journal.
          await journal.remove(journalKey(day));
          open.delete(day);
          return { counts: parsedOr(DayCounts, stored, {}, countsKey(day)), closed: true };
        }
        const counts = (await readJournal(day, true)).seen.counts();
        try {
          await storage.setItem(countsKey(day), counts);
        } catch (error) {
          warn(`[downloads] could not close day ${day} (${(error as Error).message}); its journal is kept and read`);
          return { counts, closed: false };
        }
        await journal.remove(journalKey(day));
        open.delete(day);
        return { counts, closed: true };
      }),
    );

  const closedDay = (day: number, counts: DayCount[]) => {
    const known = { counts, total: counts.reduce((sum, count) => sum + count.downloads, 0) };
    closed.set(day, known);
    return known;
  };

  /** A day's counts from the files: closed days from memory once read, open ones from the journal's new lines. */
  const countsFromFiles = async (day: number, today: number): Promise<DayCount[]> => {
    const known = closed.get(day);
    if (known) return known.counts;
    // Closed by a process whose clock is ahead is closed too.
    const counting = (isCountable(day, today) || day > today) && !(await storage.hasItem(countsKey(day)));
    // The journal's fields were checked line by line (readJournalLines): no schema to run again.
    if (counting) return dayCountsOf(day, (await serially(day, () => readJournal(day, false))).seen.counts());
    const { counts, closed: isClosed } = await closeDay(day);
    return isClosed ? closedDay(day, dayCountsOf(day, counts)).counts : dayCountsOf(day, counts);
  };

  /** A day's counts in Redis; a day past counting is read and parsed once. */
  const countsFromRedis = async (redis: Redis, day: number, today: number): Promise<DayCount[]> => {
    const known = closed.get(day);
    if (known) return known.counts;
    const stored = await redis.hgetall(redisKey(countsKey(day))).catch(unavailable);
    const counts = dayCountsOf(day, parsedOr(DayCounts, stored, {}, countsKey(day)));
    if (!isCountable(day, today) && day < today) closedDay(day, counts);
    return counts;
  };

  const readDays = async (): Promise<DayCount[][]> => {
    const today = Math.floor(now() / DAY);
    const days = redis
      ? parsedOr(CountedDays, (await redis.smembers(redisKey(DAYS_KEY)).catch(unavailable)).map(Number), [], DAYS_KEY)
      : await countedDays(storage);
    return Promise.all(days.map((day) => (redis ? countsFromRedis(redis, day, today) : countsFromFiles(day, today))));
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
      try {
        for (const [day, ofDay] of byDay)
          added += redis ? await addInRedis(redis, day, ofDay) : await addToFiles(day, ofDay);
      } catch (error) {
        // A batch that failed half way may have counted its first days.
        revision++;
        throw error;
      }
      if (added !== 0) revision++;
      return added;
    },
    /** Every stored count, by day, version and software; a closed day's are the same records each time. */
    async read(): Promise<DayCount[]> {
      return (await readDays()).flat();
    },
    /**
     * Every download, all time (the downloads badge): summed again at most every TOTAL_TTL_MS, or
     * when this process counted meanwhile; closed days add their sum kept from their one parse.
     */
    total(): Promise<number> {
      // The cache's age on the monotonic clock: the store's `now` may be fixed (tests) or jump.
      const at = performance.now();
      if (totalCache && totalCache.revision === revision && at - totalCache.at < TOTAL_TTL_MS) return totalCache.value;
      const value = readDays().then((days) =>
        days.reduce((sum, counts) => sum + counts.reduce((daySum, count) => daySum + count.downloads, 0), 0),
      );
      const entry = { at, revision, value };
      totalCache = entry;
      value.catch(() => {
        if (totalCache === entry) totalCache = undefined;
      });
      return value;
    },
  };
}
export type DownloadStore = ReturnType<typeof downloadStore>;

/** A day's record (field -> downloads, fields checked) as counts by version and software. */
function dayCountsOf(day: number, counts: Record<string, number>): DayCount[] {
  return Object.entries(counts).map(([field, downloads]) => {
    const [, versionId, software] = FIELD.exec(field)!;
    return {
      day,
      versionId: versionId!,
      software: software === '-' ? undefined : (software as ServerSoftware),
      downloads,
    };
  });
}

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
