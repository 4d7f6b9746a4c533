import { z } from 'zod';
import type { Storage } from '../../storage.ts';
import type { HourBucket } from '../aggregate.ts';
import { DAY, HOUR } from '../../helpers/duration.ts';

export const RETENTION_DAYS = 365;

const HourBuckets = z.record(
  z.string().regex(/^(?:[01]?\d|2[0-3])$/),
  z.tuple([z.int().nonnegative(), z.int().nonnegative(), z.int().positive()]),
);

/** A segment of the origin's sample journal (journaled.ts): its start in base 36, and 8 random hex digits. */
const JournalSegmentId = z.string().regex(/^[0-9a-z]{1,12}-[0-9a-f]{8}$/);

/** The key of a stored day that names the journal segments already folded into it (the embedded store only). */
const FOLDED_KEY = 'folded';

/**
 * One UTC day of a server as the embedded store keeps it: hour of day -> [max, sum, count], and
 * under `folded` the journal segments whose samples it holds, so that replaying a segment after a
 * crash never counts them twice. Redis's days never carry `folded`.
 */
export const StoredDay = z.preprocess(
  (raw) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
    const { [FOLDED_KEY]: folded = [], ...hours } = raw as Record<string, unknown>;
    return { hours, folded };
  },
  z.object({ hours: HourBuckets, folded: z.array(JournalSegmentId).max(64) }),
);
export type StoredDay = z.output<typeof StoredDay>;

/** A stored day as stored, `folded` included (a day that folded no segment has none). */
export const storedDayValue = ({ hours, folded }: StoredDay) =>
  folded.length === 0 ? hours : { ...hours, [FOLDED_KEY]: folded };

/** One UTC day of a server: hour of day -> [max, sum, count] of its samples (what migration copies: `folded` left out). */
export const DayRecord = StoredDay.transform((day) => day.hours);
export type DayRecord = z.output<typeof DayRecord>;

export type Sample = { at: number; players: number };

/** Player counts folded into hourly buckets, one stored day per server and UTC day. */
export type SampleStore = {
  /** Resolves once every sample is stored (an answered sample survives a crash). */
  add(serverId: string, samples: readonly Sample[]): Promise<void>;
  /** Hourly buckets from `from` to `to` (epoch ms), oldest first. */
  range(serverId: string, from: number, to: number): Promise<HourBucket[]>;
};

/** When a stored day leaves the 365-day window (Unix seconds): Redis drops it then. */
export function dayExpiresAt(day: number): number {
  return ((day + RETENTION_DAYS + 2) * DAY) / 1000;
}

export const dayKey = (serverId: string, day: number) => `samples:${serverId}:${day}`;
export const hourOf = (at: number) => Math.floor((at % DAY) / HOUR);

/** `20261120T123000123Z`: when a corrupt day was moved aside, in a name without the key separator. */
export const stampOf = (date: Date) => date.toISOString().replace(/[-:.]/g, '');

/** What both backends say of a stored day that did not parse, once it is kept aside. */
export const corruptDayLine = (key: string, aside: string) =>
  `[samples] the stored player counts ${key} did not parse: kept as ${aside} for inspection, the day starts afresh with the new samples`;

/** Samples by UTC day (epoch days), in the order given. */
export function samplesByDay(samples: readonly Sample[]): Map<number, Sample[]> {
  const byDay = new Map<number, Sample[]>();
  for (const sample of samples) {
    const day = Math.floor(sample.at / DAY);
    const list = byDay.get(day);
    if (list) list.push(sample);
    else byDay.set(day, [sample]);
  }
  return byDay;
}

/** Folds samples into a day's hourly buckets, in place. */
export function foldSamples(hours: DayRecord, samples: readonly Sample[]): DayRecord {
  for (const { at, players } of samples) {
    const hour = String(hourOf(at));
    const [max, sum, count] = hours[hour] ?? [0, 0, 0];
    hours[hour] = [Math.max(max, players), sum + players, count + 1];
  }
  return hours;
}

/** Samples of a day not in its stored record yet (the journal's, by the segments the day has folded). */
export type UnfoldedSamples = (day: number, folded: readonly string[]) => Sample[];

/**
 * Hourly buckets from `from` to `to`, read through the storage whichever backend wrote them, with
 * what `unfolded` says is not stored yet; a day that does not parse is a gap.
 */
export async function readRange(
  storage: Storage,
  serverId: string,
  from: number,
  to: number,
  unfolded: UnfoldedSamples = () => [],
): Promise<HourBucket[]> {
  const days: number[] = [];
  for (let day = Math.floor(from / DAY); day <= Math.floor(to / DAY); day++) days.push(day);
  const items = await storage.getItems(days.map((day) => dayKey(serverId, day)));
  const byKey = new Map(items.map((item) => [item.key, item.value]));
  return days.flatMap((day) => {
    const value = byKey.get(dayKey(serverId, day));
    // A day that does not parse reads as a gap, but for the journal's samples, which replace it when folded.
    const parsed = StoredDay.safeParse(value ?? {});
    const stored = parsed.success ? parsed.data : { hours: {}, folded: [] };
    const hours = foldSamples({ ...stored.hours }, unfolded(day, stored.folded));
    return Object.entries(hours)
      .map(([hour, [max, sum, count]]) => ({ hour: day * DAY + Number(hour) * HOUR, max, sum, count }))
      .sort((a, b) => a.hour - b.hour);
  });
}
