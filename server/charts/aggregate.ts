import { DAY, HOUR } from '../helpers/duration.ts';

/** One hour of samples, as storage keeps them: the highest count, and sum and number for the mean. */
export type HourBucket = { hour: number; max: number; sum: number; count: number };

export type ChartPoint = { start: number; peak: number | null; average: number | null };
export type Series = { period: 'hour' | 'day'; days: number; points: ChartPoint[] };

/**
 * Folds hourly buckets into the chart's periods: one point per hour when days <= 2, one per UTC day
 * otherwise, ending with the period that holds `now`. Peak is the highest sample of the period,
 * average the mean of all its samples; a period without samples is null (a gap, not a zero).
 */
export function aggregate(buckets: readonly HourBucket[], { days, now }: { days: number; now: number }): Series {
  const period = days <= 2 ? 'hour' : 'day';
  const size = period === 'hour' ? HOUR : DAY;
  const count = period === 'hour' ? days * 24 : days;
  const last = Math.floor(now / size) * size;
  const first = last - (count - 1) * size;
  const folded = Array.from({ length: count }, () => ({ max: -1, sum: 0, samples: 0 }));
  for (const bucket of buckets) {
    const index = Math.floor((bucket.hour - first) / size);
    const slot = folded[index];
    if (!slot || bucket.count === 0) continue;
    slot.max = Math.max(slot.max, bucket.max);
    slot.sum += bucket.sum;
    slot.samples += bucket.count;
  }
  return {
    period,
    days,
    points: folded.map((slot, i) => ({
      start: first + i * size,
      peak: slot.samples === 0 ? null : slot.max,
      average: slot.samples === 0 ? null : slot.sum / slot.samples,
    })),
  };
}
