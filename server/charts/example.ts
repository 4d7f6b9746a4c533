import type { HourBucket } from './aggregate.ts';

/** The example chart ends here, so the same query always draws the same chart (SPEC 4.10). */
export const EXAMPLE_NOW = Date.UTC(2026, 5, 1, 23, 30);

/** A deterministic value in [0, 1) for an integer: the classic sine hash, no state. */
function noise(i: number): number {
  const x = Math.sin(i * 12.9898 + 78.233) * 43758.5453;
  return x - Math.floor(x);
}

/**
 * Plausible hourly player counts for `days` days before `now`: a daily rhythm peaking in the UTC
 * evening, a weekend rise, and a little deterministic noise.
 */
export function exampleBuckets(days: number, now: number): HourBucket[] {
  const lastHour = Math.floor(now / 3_600_000);
  const buckets: HourBucket[] = [];
  for (let hour = lastHour - days * 24 + 1; hour <= lastHour; hour++) {
    const date = new Date(hour * 3_600_000);
    const daily = 0.55 + 0.45 * Math.sin((2 * Math.PI * (date.getUTCHours() - 13)) / 24);
    const weekend = date.getUTCDay() === 0 || date.getUTCDay() === 6 ? 1.35 : 1;
    const average = Math.round(60 * daily * weekend * (0.85 + 0.3 * noise(hour)));
    const samples = 12;
    buckets.push({
      hour: hour * 3_600_000,
      max: average + Math.round(12 * noise(hour + 7)),
      sum: average * samples,
      count: samples,
    });
  }
  return buckets;
}
