import type { Redis } from 'ioredis';
import { DAY } from '../helpers/duration.ts';
import { STDERR_LINES, type Log } from '../helpers/log.ts';
import type { Storage } from '../storage.ts';
import type { Counted } from './counted.ts';
import type { Digest } from './digest-set.ts';
import { countField } from './journal-lines.ts';
import { EXACT_CLIENTS } from './seen-clients.ts';
import { fileDayCounter } from './store/file.ts';
import { redisDayCounter } from './store/redis.ts';
import type { DayCount, DayCounter } from './store/contract.ts';

export { countField };
export { SEEN_DAYS, countedDays, isCountable, journalKey, type DayCount } from './store/contract.ts';

/** How long the total (the downloads badge) is kept before the counts are summed again, unless this process counted meanwhile. */
const TOTAL_TTL_MS = 5000;

export type DownloadStoreOptions = {
  /** Distinct clients a day counts exactly (SeenClients); approximately past them. */
  exactClients?: number;
  log?: Log;
};

/** Download counts per UTC day, version and software, deduplicated per client, version and day. */
export type DownloadStore = {
  /**
   * Is this download counted already, as far as this process knows without asking the store: it
   * stored it, or read it from the day's journal. A cheap check before a download is queued.
   */
  isCounted(day: number, digest: Digest): boolean;
  /** Counts each download not yet counted for its client, version and day; resolves how many were new. */
  add(downloads: readonly Counted[]): Promise<number>;
  /** Every stored count, by day, version and software; a closed day's are the same records each time. */
  read(): Promise<DayCount[]>;
  /**
   * Every download, all time (the downloads badge): summed again at most every TOTAL_TTL_MS, or
   * when this process counted meanwhile.
   */
  total(): Promise<number>;
};

/**
 * The download store of the configured backend: Redis (REDIS_URL, store/redis.ts) or the embedded
 * store's journals and records (store/file.ts), behind the same contract (test/store-contract.ts).
 */
export function downloadStore(
  storage: Storage,
  redis?: Redis,
  now: () => number = Date.now,
  options: DownloadStoreOptions = {},
): DownloadStore {
  const exactClients = options.exactClients ?? EXACT_CLIENTS;
  return countingByDay(
    redis
      ? redisDayCounter(redis, { exactClients })
      : fileDayCounter(storage, { exactClients, log: options.log ?? STDERR_LINES }),
    now,
  );
}

/** A backend's days as the store: batches split by day, and the total cached until this process counts. */
function countingByDay(days: DayCounter, now: () => number): DownloadStore {
  /** Bumped when this process counts something: the total is summed again. */
  let revision = 0;
  let totalCache: { at: number; revision: number; value: Promise<number> } | undefined;
  const readDays = () => days.readDays(Math.floor(now() / DAY));

  return {
    isCounted: (day, digest) => days.isCounted(day, digest),
    async add(downloads) {
      const byDay = new Map<number, Counted[]>();
      for (const download of downloads) {
        const ofDay = byDay.get(download.day);
        if (ofDay) ofDay.push(download);
        else byDay.set(download.day, [download]);
      }
      let added = 0;
      try {
        for (const [day, ofDay] of byDay) added += await days.addDay(day, ofDay);
      } catch (error) {
        // A batch that failed half way may have counted its first days.
        revision++;
        throw error;
      }
      if (added !== 0) revision++;
      return added;
    },
    async read() {
      return (await readDays()).flat();
    },
    total() {
      // The cache's age on the monotonic clock: the store's `now` may be fixed (tests) or jump.
      const at = performance.now();
      if (totalCache && totalCache.revision === revision && at - totalCache.at < TOTAL_TTL_MS) return totalCache.value;
      const value = readDays().then((counts) =>
        counts.reduce((sum, ofDay) => sum + ofDay.reduce((daySum, count) => daySum + count.downloads, 0), 0),
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
