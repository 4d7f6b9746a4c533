import { SECONDS_PER, type DurationUnit } from '../helpers/duration.ts';

/** SPEC 8: 100 requests per 15 minutes per client address. */
export type RateLimitPolicy = { limit: number; windowSeconds: number };

/** RATE_LIMIT: `100/15m` (count per window of s, m or h), or `0` for no limit. */
export function parseRateLimit(text: string): RateLimitPolicy | null | undefined {
  if (text.trim() === '0') return null;
  const match = /^(\d{1,7})\/(\d{1,5})([smh])$/.exec(text.trim());
  if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) return undefined;
  return { limit: Number(match[1]), windowSeconds: Number(match[2]) * SECONDS_PER[match[3] as DurationUnit] };
}
