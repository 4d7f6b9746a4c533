import pLimit, { type LimitFunction } from 'p-limit';
import { z } from 'zod';
import type { Storage } from '../storage.ts';
import type { HourBucket } from './aggregate.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
export const RETENTION_DAYS = 365;

/** One UTC day of a server: hour of day -> [max, sum, count] of its samples. */
const DayRecord = z.record(z.string().regex(/^(?:[01]?\d|2[0-3])$/), z.tuple([z.int().nonnegative(), z.int().nonnegative(), z.int().positive()]));
type DayRecord = z.infer<typeof DayRecord>;

export type Sample = { at: number; players: number };

/**
 * Player counts folded into hourly buckets, one storage item per server and UTC day. Updates of
 * one day are serialised in this process (read, fold, write); across origins that is issue 7's
 * Redis. A write has finished when `add` resolves, so an answered sample survives a crash.
 */
export function sampleStore(storage: Storage) {
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
      await Promise.all(
        [...byDay].map(([day, daySamples]) =>
          serialised(dayKey(serverId, day), async () => {
            const record = await readDay(dayKey(serverId, day));
            for (const { at, players } of daySamples) {
              const hour = String(Math.floor((at % DAY) / HOUR));
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
