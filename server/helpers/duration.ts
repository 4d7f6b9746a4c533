// Durations in the two units the code counts in, one module so a reader sees both side by side.

/** Seconds per unit of the durations settings and options are written in (`15m` in RATE_LIMIT, `30d` in --expires). */
export const SECONDS_PER = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
export type DurationUnit = keyof typeof SECONDS_PER;

/**
 * Milliseconds, the clock's unit (`now()`): charts and download counts cut time into UTC hours
 * and days (DESIGN: dates are UTC).
 */
export const HOUR = SECONDS_PER.h * 1000;
export const DAY = 24 * HOUR;

/** `90m`, `12h`, `7d` (a count of s, m, h or d, as `--expires` and RATE_LIMIT write them) in milliseconds; undefined when `text` is none or zero. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,6})([smhd])$/.exec(text);
  if (!match || Number(match[1]) === 0) return undefined;
  return Number(match[1]) * SECONDS_PER[match[2] as DurationUnit] * 1000;
}
