import { z } from 'zod';
import { parseFile } from '../../data-files.ts';
import type { Storage } from '../../storage.ts';
import type { ServerSoftware } from '../../versions/software.ts';
import type { Counted } from '../counted.ts';
import type { Digest } from '../digest-set.ts';
import { FIELD } from '../journal-lines.ts';

/** One day's counts as stored: field -> downloads. */
export const DayCounts = z.record(z.string().regex(FIELD), z.coerce.number().int().nonnegative());
/** The days that have counts (the embedded store cannot list a folder's keys alone). */
export const CountedDays = z.array(z.int().nonnegative());

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

export const DAYS_KEY = 'downloads:days';
export const countsKey = (day: number) => `downloads:counts:${day}`;
/** A day's journal in the embedded store, while the day may be counted. */
export const journalKey = (day: number) => `downloads:journal:${day}`;

/** The days that have counts, as the embedded store lists them. */
export async function countedDays(storage: Storage): Promise<number[]> {
  return parsedOr(CountedDays, await storage.getItem(DAYS_KEY), [], DAYS_KEY);
}

/**
 * What a backend of the download store does, by day (file.ts, redis.ts); downloadStore
 * splits batches into days and caches the total over it.
 */
export type DayCounter = {
  /** Is this download counted already, as far as this process knows without asking the store? */
  isCounted(day: number, digest: Digest): boolean;
  /** Counts a day's downloads not yet counted for their client; resolves how many were new. */
  addDay(day: number, downloads: Counted[]): Promise<number>;
  /** Every counted day's counts (`today`: which days may still change). */
  readDays(today: number): Promise<DayCount[][]>;
};

/** A day's record (field -> downloads, fields checked) as counts by version and software. */
export function dayCountsOf(day: number, counts: Record<string, number>): DayCount[] {
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

/**
 * Stored contents are checked like any input: absent is `fallback`; a record that is not what we
 * write throws (the read answers 500 and is logged; a batch is kept for the next try), never
 * overwritten with less.
 */
export function parsedOr<T>(schema: z.ZodType<T>, value: unknown, fallback: T, key: string): T {
  if (value === null || value === undefined) return fallback;
  return parseFile(schema, value, `stored ${key}`);
}
