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
