import { resolve } from 'node:path';
import { z } from 'zod';
import { describeIssues } from './describe-issues.ts';
import { isAddressOrRange } from './http/addresses.ts';
import { parseRateLimit, type RateLimitPolicy } from './http/rate-limit.ts';

const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('localhost'),
  DATA_DIR: z.string().min(1).default('./data'),
  DIST_DIR: z.string().min(1).default('./dist'),
  STORAGE_DIR: z.string().min(1).default('./.storage'),
  BUILD_CACHE_DIR: z.string().min(1).optional(),
  IMAGE_CACHE: z.enum(['on', 'off']).default('on'),
  LOG_REQUESTS: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
  SITE: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
  RATE_LIMIT: z
    .string()
    .default('100/15m')
    .transform((text, issue) => {
      const policy = parseRateLimit(text);
      if (policy === undefined) {
        issue.addIssue({ code: 'custom', message: 'must be <count>/<n><s|m|h> such as 100/15m, or 0 for no limit' });
        return z.NEVER;
      }
      return policy;
    }),
  TRUST_PROXY: z
    .string()
    .default('')
    .transform((list) => list.split(',').map((entry) => entry.trim()).filter(Boolean))
    .refine((entries) => entries.every(isAddressOrRange), { error: 'must be a comma-separated list of IP addresses or CIDR ranges' }),
  REDIS_URL: z
    .url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379' })
    .optional()
    .or(z.literal('').transform(() => undefined)),
  PRIVATE_CHART_IPS: z
    .string()
    .default('')
    .transform((list) => list.split(',').map((entry) => entry.trim()).filter(Boolean))
    .refine((entries) => entries.every(isAddressOrRange), { error: 'must be a comma-separated list of IP addresses or CIDR ranges' }),
});

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  distDir: string;
  /** The embedded store: caches and (later) users, servers, samples. */
  storageDir: string;
  /** Rendered images the build keeps between builds; default <DIST_DIR>/.cache. */
  buildCacheDir: string;
  /** off: every brand query renders, bypassing precomputed files and the cache (benchmarks). */
  imageCache: boolean;
  /** One JSON line per request on stdout; off when a CDN or proxy in front keeps the access log. */
  logRequests: boolean;
  /** Build the human site (site/) into the tree; off: the API alone. */
  site: boolean;
  /** Addresses private charts may be read from; empty: any. */
  privateChartIps: string[];
  /** Proxies whose X-Forwarded-For is believed; empty: none. */
  trustProxy: string[];
  /** SPEC 8's request limit per client address; null: off. */
  rateLimit: RateLimitPolicy | null;
  /** Shared state (the rate limit's counters) in Redis; undefined: in this process. */
  redisUrl: string | undefined;
};

/** The only reader of process.env: read once at start, checked, passed down. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Env.safeParse(env);
  if (!parsed.success) throw new Error(`Invalid configuration: ${describeIssues(parsed.error.issues)}`);
  const { PORT, HOST, DATA_DIR, DIST_DIR, STORAGE_DIR, BUILD_CACHE_DIR, IMAGE_CACHE, LOG_REQUESTS, SITE, PRIVATE_CHART_IPS, TRUST_PROXY, RATE_LIMIT, REDIS_URL } = parsed.data;
  return {
    port: PORT,
    host: HOST,
    dataDir: resolve(DATA_DIR),
    distDir: resolve(DIST_DIR),
    storageDir: resolve(STORAGE_DIR),
    buildCacheDir: resolve(BUILD_CACHE_DIR ?? `${DIST_DIR}/.cache`),
    imageCache: IMAGE_CACHE === 'on',
    logRequests: LOG_REQUESTS === 'on',
    site: SITE === 'on',
    privateChartIps: PRIVATE_CHART_IPS,
    trustProxy: TRUST_PROXY,
    rateLimit: RATE_LIMIT,
    redisUrl: REDIS_URL,
  };
}
