/** Seconds per unit of the durations settings and options are written in (`15m` in RATE_LIMIT, `30d` in --expires). */
export const SECONDS_PER = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
export type DurationUnit = keyof typeof SECONDS_PER;
