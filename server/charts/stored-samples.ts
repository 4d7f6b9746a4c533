import { z } from 'zod';
import type { Storage } from '../storage.ts';
import type { HourBucket } from './aggregate.ts';
import { DAY, HOUR } from '../duration.ts';

export const RETENTION_DAYS = 365;

/** One UTC day of a server: hour of day -> [max, sum, count] of its samples. */
export const DayRecord = z.record(
  z.string().regex(/^(?:[01]?\d|2[0-3])$/),
  z.tuple([z.int().nonnegative(), z.int().nonnegative(), z.int().positive()]),
);
export type DayRecord = z.infer<typeof DayRecord>;

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

/** Hourly buckets from `from` to `to`, read through the storage whichever backend wrote them; a day that does not parse is a gap. */
export async function readRange(storage: Storage, serverId: string, from: number, to: number): Promise<HourBucket[]> {
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
}
