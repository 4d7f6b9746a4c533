import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { parseFile } from '../data-files.ts';
import type { Storage } from '../storage.ts';
import { SECONDS_PER, parseDuration } from '../helpers/duration.ts';
import { playersChartPath } from './paths.ts';
import { fileUrlKey } from './url-key/file.ts';
import { redisUrlKey } from './url-key/redis.ts';
import { CHART_BACKGROUNDS, CHART_FORMATS, CHART_RANGES, CHART_THEMES, ChartQuery } from './schema.ts';

const ranged = (name: keyof typeof CHART_RANGES) => {
  const { min, max } = CHART_RANGES[name];
  const message = `must be an integer from ${min} to ${max}`;
  return z.int({ error: message }).min(min, { error: message }).max(max, { error: message }).optional();
};

const MAX_EXPIRY_SECONDS = 365 * SECONDS_PER.d;
const EXPIRY_MESSAGE = 'must be a duration from 1m to 365d, such as 90m, 12h or 30d';

/** `30d`, `12h`, `90m` -> seconds, from a minute to a year. */
const Expiry = z
  .string({ error: EXPIRY_MESSAGE })
  .regex(/^\d{1,6}[mhd]$/, { error: EXPIRY_MESSAGE })
  // parseDuration: undefined for zero, which the range below refuses as NaN.
  .transform((text) => (parseDuration(text) ?? Number.NaN) / 1000)
  .refine((seconds) => seconds >= 60 && seconds <= MAX_EXPIRY_SECONDS, { error: EXPIRY_MESSAGE });

/** POST /api/servers/:id/chart-urls and `depot chart-url`: the chart a URL shows, and how long it lives. */
export const ChartUrlBody = z
  .strictObject({
    days: ranged('days'),
    width: ranged('width'),
    height: ranged('height'),
    theme: z.enum(CHART_THEMES, { error: 'must be light, dark or auto' }).optional(),
    background: z.enum(CHART_BACKGROUNDS, { error: 'must be solid or transparent' }).optional(),
    format: z.enum(CHART_FORMATS, { error: 'must be svg, png, json or csv' }).optional(),
    expires: Expiry.optional().meta({ description: 'How long the URL answers: 1m to 365d (default 30d)' }),
  })
  .meta({
    id: 'ChartUrlRequest',
    description: "The chart's parameters (absent: the chart's defaults) and the URL's lifetime",
  });
export type ChartUrlBody = z.output<typeof ChartUrlBody>;

export const ChartUrlAnswer = z
  .object({
    url: z.url().meta({ description: 'Answers without a token until `expires`, from PRIVATE_CHART_IPS when set' }),
    expires: z.iso.datetime(),
  })
  .meta({ id: 'ChartUrl' });

/** The signed query parameters of a chart URL (the rest of the chart query is ChartQuery's). */
const SignedChartParams = z.object({
  exp: z
    .string({ error: 'must be a Unix time in seconds' })
    .regex(/^\d{1,12}$/, { error: 'must be a Unix time in seconds' })
    .transform(Number)
    .optional()
    .meta({ description: 'Signed chart URLs: when the URL stops answering (Unix seconds)' }),
  sig: z
    .string({ error: 'must be 43 base64url characters' })
    .regex(/^[A-Za-z0-9_-]{43}$/, { error: 'must be 43 base64url characters' })
    .optional()
    .meta({
      description:
        'Signed chart URLs: HMAC-SHA256 of the path and the canonical parameters; with exp, answers without a token',
    }),
});

/** SPEC 4.9's query with a signed URL's exp and sig. */
export const PlayersChartQuery = ChartQuery.extend(SignedChartParams.shape);

/**
 * What a signature covers: the chart's path and every chart parameter in a fixed order with its
 * default filled in, then exp. A URL that leaves a parameter out and one that names its default show
 * the same chart and verify alike; any other change does not.
 */
function signedText(serverId: string, query: ChartQuery, exp: number): string {
  const { days, width, height, theme, background, format } = query;
  const params = new URLSearchParams({
    days: String(days),
    width: String(width),
    height: String(height),
    theme,
    background,
    format,
    exp: String(exp),
  });
  return playersChartPath(serverId, params);
}

const hmac = (key: string, text: string) => createHmac('sha256', key).update(text).digest();

/**
 * The absolute URL of a chart that answers without a token until `exp` (Unix seconds): the given
 * parameters, exp, and sig by the newest key.
 */
export function signChartUrl(options: {
  baseUrl: string;
  keys: readonly string[];
  serverId: string;
  given: Record<string, string>;
  query: ChartQuery;
  exp: number;
}): string {
  const { baseUrl, keys, serverId, given, query, exp } = options;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(given)) params.set(name, value);
  params.set('exp', String(exp));
  params.set('sig', hmac(keys[0]!, signedText(serverId, query, exp)).toString('base64url'));
  return `${baseUrl.replace(/\/$/, '')}${playersChartPath(serverId, params)}`;
}

const DEFAULT_EXPIRY_SECONDS = 30 * SECONDS_PER.d;

/** A signed URL for a validated request: the route and the CLI both mint through here. */
export function mintChartUrl(options: {
  baseUrl: string;
  keys: readonly string[];
  serverId: string;
  body: ChartUrlBody;
  now: number;
}): z.output<typeof ChartUrlAnswer> {
  const { expires, ...chart } = options.body;
  const given = Object.fromEntries(
    Object.entries(chart).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)]])),
  );
  const exp = Math.floor(options.now / 1000) + (expires ?? DEFAULT_EXPIRY_SECONDS);
  const url = signChartUrl({ ...options, given, query: ChartQuery.parse(given), exp });
  return { url, expires: new Date(exp * 1000).toISOString() };
}

/** Does `sig` sign this chart by any of the keys (old ones too, until removed)? Constant time per key. */
export function chartSignatureMatches(
  keys: readonly string[],
  serverId: string,
  query: ChartQuery,
  exp: number,
  sig: string,
): boolean {
  const presented = Buffer.from(sig, 'base64url');
  // base64url decoding ignores the last character's spare bits, so 4 spellings decode alike: only
  // the one the signer writes is the signature (the URL is the credential, and caches key on it).
  if (presented.toString('base64url') !== sig) return false;
  const text = signedText(serverId, query, exp);
  return keys.some((key) => {
    const expected = hmac(key, text);
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  });
}

/** Where the generated key is kept: STORAGE_DIR/chart-url-key, or depot:chart-url-key in Redis. A secret. */
const STORED_KEY = 'chart-url-key';
const StoredKey = z
  .string()
  .regex(/^[A-Za-z0-9_-]{43}$/, { error: 'is not a generated key (43 base64url characters)' });

/**
 * Where the generated key is kept (url-key/file.ts, url-key/redis.ts): `keepFirst` stores `fresh`
 * only if no key is stored yet, atomically for every process sharing the store, and resolves the
 * stored value (parsed by the caller).
 */
type UrlKeyStore = { keepFirst(fresh: string): Promise<unknown> };

/**
 * The keys chart URLs are signed and checked with: CHART_URL_KEYS when set (a stored key is then
 * not accepted); else one key of 32 random bytes, generated by whichever origin or CLI needs it
 * first and kept in the state store, set only if absent (under the key's file lock, or SET NX in
 * Redis), so every origin and the CLI that share the store sign and accept alike.
 */
export async function chartUrlKeys(configured: readonly string[], storage: Storage, redis?: Redis): Promise<string[]> {
  if (configured.length > 0) return [...configured];
  const kept: UrlKeyStore = redis ? redisUrlKey(redis, STORED_KEY) : fileUrlKey(storage, STORED_KEY);
  const stored = await kept.keepFirst(randomBytes(32).toString('base64url'));
  return [parseFile(StoredKey, stored, `stored ${STORED_KEY}`)];
}
