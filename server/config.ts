import { resolve } from 'node:path';
import { z } from 'zod';
import { describeIssues } from './helpers/describe-issues.ts';
import { isAddressOrRange } from './http/addresses.ts';
import { parseRateLimit, type RateLimitPolicy } from './http/rate-limit-policy.ts';

/** A zod transform through `parse`, whose undefined means `message`. */
function parsedWith<T>(parse: (text: string) => T | undefined, message: string) {
  return (text: string, issue: z.core.$RefinementCtx<string>): T => {
    const value = parse(text);
    if (value === undefined) {
      issue.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return value;
  };
}

/** `a, b,c` -> ['a', 'b', 'c'] (empty entries dropped). */
const commaList = (fallback = '') =>
  z
    .string()
    .default(fallback)
    .transform((list) =>
      list
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    );

/** TRUST_PROXY, PRIVATE_CHART_IPS, NGINX_REAL_IP_FROM: addresses and CIDR ranges. */
const addressList = () =>
  commaList().refine((entries) => entries.every(isAddressOrRange), {
    error: 'must be a comma-separated list of IP addresses or CIDR ranges',
  });

/**
 * An address as nginx's `server` and `listen` lines name it: host:port or [v6]:port (the host at
 * most 253 characters), or for `listen` a port alone; the port 1 to 65535, which nginx -t checks.
 */
function isHostPort(text: string, portAlone = false): boolean {
  const match = /^(?:([\w.-]{1,253}|\[[0-9a-fA-F:.]{2,45}\]):)?(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  return match !== null && (portAlone || match[1] !== undefined) && port >= 1 && port <= 65_535;
}

/** An optional setting, trimmed: unset, empty or blank is absent. */
const optionalText = () =>
  z
    .string()
    .optional()
    .transform((text) => text?.trim() || undefined);

/** MAX_CONNECTIONS' default: well under the usual 1024 open files, beside the store's and the tree's. */
const DEFAULT_MAX_CONNECTIONS = 768;

const Env = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    HOST: z.string().min(1).default('localhost'),
    DATA_DIR: z.string().min(1).default('./data'),
    DIST_DIR: z.string().min(1).default('./dist'),
    STORAGE_DIR: z.string().min(1).default('./.storage'),
    BUILD_CACHE_DIR: z.string().min(1).optional(),
    CACHE_MAX_BYTES: z
      .string()
      .default('256MiB')
      .transform(
        parsedWith(
          parseByteSize,
          'must be a size in bytes such as 268435456, 500MB or 1GiB (0: store no cache entries)',
        ),
      ),
    IMAGE_CACHE: z.enum(['on', 'off']).default('on'),
    LOG_REQUESTS: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
    DOWNLOAD_COUNTS: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
    SITE: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
    RATE_LIMIT: z
      .string()
      .default('100/15m')
      .transform(parsedWith(parseRateLimit, 'must be <count>/<n><s|m|h> such as 100/15m, or 0 for no limit')),
    INGEST_RATE_LIMIT: z
      .string()
      .default('60/1m')
      .transform(parsedWith(parseRateLimit, 'must be <count>/<n><s|m|h> such as 60/1m, or 0 for no limit')),
    TRUST_PROXY: addressList(),
    REDIS_URL: z
      .url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379' })
      .optional()
      .or(z.literal('').transform(() => undefined)),
    NGINX_ORIGINS: commaList('127.0.0.1:3000').refine(
      (entries) => entries.length > 0 && entries.every((entry) => isHostPort(entry)),
      { error: 'must be a comma-separated list of host:port, e.g. 10.0.0.5:3000,10.0.0.6:3000' },
    ),
    NGINX_LISTEN: z
      .string()
      .refine((listen) => isHostPort(listen, true), {
        error: 'must be a port or address:port (the port 1 to 65535), e.g. 8080 or 127.0.0.1:8080',
      })
      .default('8080'),
    NGINX_REAL_IP_FROM: addressList(),
    NGINX_PUBLISH_ORIGIN: optionalText().refine((origin) => origin === undefined || isHostPort(origin), {
      error: 'must be one host:port from where nginx sends publishing requests, e.g. 10.0.0.5:3000',
    }),
    PUBLISH: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
    PUBLISH_MAX_BYTES: z
      .string()
      .default('64MiB')
      .transform(
        parsedWith((text) => {
          const bytes = parseByteSize(text);
          return bytes === undefined || bytes < 1 ? undefined : bytes;
        }, 'must be a size in bytes of at least 1, such as 67108864, 100MB or 1GiB'),
      ),
    AFTER_SWAP: optionalText(),
    DEPLOY_DIST_DIR: z
      .string()
      .regex(/^\/[^\s;{}"'$\p{Cc}\p{Zl}\p{Zp}]{0,4094}$/u, {
        error: 'must be an absolute path of at most 4095 characters without spaces, quotes or control characters',
      })
      .optional(),
    ORIGIN_URL: z
      .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
      .default('http://localhost:3000'),
    PRIVATE_CHART_IPS: addressList(),
    CHART_URL_KEYS: commaList().refine((keys) => keys.every((key) => key.length >= 32), {
      error:
        'must be a comma-separated list of keys of at least 32 characters, newest first (e.g. openssl rand -base64 32)',
    }),
    PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
    HEADERS_TIMEOUT: z
      .string()
      .default('10s')
      .transform(parsedWith(parseMilliseconds, 'must be a duration such as 10s, 500ms or 1m, from 100ms to 1h')),
    REQUEST_TIMEOUT: z
      .string()
      .default('60s')
      .transform(parsedWith(parseMilliseconds, 'must be a duration such as 60s, 500ms or 2m, from 100ms to 1h')),
    MAX_CONNECTIONS: z.coerce
      .number({ error: 'must be an integer from 1 to 1000000' })
      .int({ error: 'must be an integer from 1 to 1000000' })
      .min(1, { error: 'must be an integer from 1 to 1000000' })
      .max(1_000_000, { error: 'must be an integer from 1 to 1000000' })
      .default(DEFAULT_MAX_CONNECTIONS),
    WEBHOOK_RETRY_BASE_MS: z.coerce
      .number()
      .int()
      .min(10, { error: 'must be an integer number of milliseconds from 10' })
      .max(3_600_000)
      .default(30_000),
  })
  // Node refuses a headers timeout longer than the whole request's.
  .refine((env) => env.HEADERS_TIMEOUT <= env.REQUEST_TIMEOUT, {
    path: ['HEADERS_TIMEOUT'],
    error: 'must not be longer than REQUEST_TIMEOUT',
  });

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  distDir: string;
  /** The embedded store: servers, token digests, player-count days, Idempotency-Keys, render caches. */
  storageDir: string;
  /** Rendered images the build keeps between builds; default <DIST_DIR>/.cache. */
  buildCacheDir: string;
  /** What the embedded store's render caches may hold, in bytes; least recently used entries go first. */
  cacheMaxBytes: number;
  /** off: every brand query renders, bypassing precomputed files and the cache (benchmarks). */
  imageCache: boolean;
  /** One JSON line per request on stdout; off when a CDN or proxy in front keeps the access log. */
  logRequests: boolean;
  /** Build the human site (site/) into the tree; off: the API alone. */
  site: boolean;
  /** DOWNLOAD_COUNTS: count the JARs the origin serves (keeping client digests 8 days); off: count none. */
  downloadCounts: boolean;
  /** Addresses private charts may be read from; empty: any. */
  privateChartIps: string[];
  /** CHART_URL_KEYS: HMAC keys of signed chart URLs, newest (the one that signs) first; empty: a key generated into the state store. */
  chartUrlKeys: string[];
  /** Proxies whose X-Forwarded-For is believed; empty: none. */
  trustProxy: string[];
  /** SPEC 8's request limit per client address; null: off. */
  rateLimit: RateLimitPolicy | null;
  /** Ingestion requests (POST /api/servers/:id/stats) per server key and window, counted after the key is checked; null: off. */
  ingestRateLimit: RateLimitPolicy | null;
  /** All shared state (rate limit, caches, tokens, servers, samples) in Redis; undefined: in this process. */
  redisUrl: string | undefined;
  /** What the build's nginx.conf and export-static's `_redirects` name. */
  deploy: DeployOptions;
  /** Where clients reach the service (PUBLIC_URL, else ORIGIN_URL): webhooks' download links. */
  publicUrl: string;
  /** A failed webhook delivery's first retry delay, doubling after each failure. */
  webhookRetryBaseMs: number;
  /** HEADERS_TIMEOUT: a connection whose request headers have not all arrived after this long is closed (408). */
  headersTimeoutMs: number;
  /** REQUEST_TIMEOUT: the same for the whole request, body included. */
  requestTimeoutMs: number;
  /** MAX_CONNECTIONS: open connections one origin accepts; more are closed at once. */
  maxConnections: number;
  /** Publishing over HTTP (POST and PATCH on /api/plugin-versions) on this origin. */
  publish: PublishOptions;
};

/** Whether and how this origin takes releases over HTTP (issue 30). */
type PublishOptions = {
  /** PUBLISH: off answers publishing requests 503, naming the setting (another origin publishes). */
  enabled: boolean;
  /** PUBLISH_MAX_BYTES: an upload's whole body, JAR and metadata, at most; more is a 413. */
  maxBytes: number;
  /** AFTER_SWAP: a shell command run after each swap a publish makes (server/publish/after-swap.ts). */
  afterSwap: string | undefined;
};

/** Where and how a tree is deployed behind nginx or on a static host. */
export type DeployOptions = {
  /** The origins nginx forwards to (`host:port`). */
  origins: string[];
  /** nginx's `listen` argument. */
  listen: string;
  /** Proxies or CDN ranges in front of nginx whose X-Forwarded-For nginx believes. */
  realIpFrom: string[];
  /** dist/ on the machine nginx runs on (absolute); absent: DIST_DIR itself. */
  distDir?: string;
  /** The origin's public URL: static hosts send what they cannot answer there. */
  originUrl: string;
  /** PUBLIC_URL: where clients reach the service; the feeds' absolute links (default: DEFAULT_PUBLIC_URL). */
  publicUrl?: string;
  /** NGINX_PUBLISH_ORIGIN: where nginx sends POST and PATCH on /api/plugin-versions; absent: the first of `origins`. */
  publishOrigin?: string;
  /** PUBLISH_MAX_BYTES: nginx's body limit for those requests (plus multipart's overhead); absent: 64 MiB. */
  publishMaxBytes?: number;
};

/** The only reader of process.env: read once at start, checked, passed down. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Env.safeParse(env);
  if (!parsed.success) throw new Error(`Invalid configuration: ${describeIssues(parsed.error.issues)}`);
  const {
    PORT,
    HOST,
    DATA_DIR,
    DIST_DIR,
    STORAGE_DIR,
    BUILD_CACHE_DIR,
    CACHE_MAX_BYTES,
    IMAGE_CACHE,
    LOG_REQUESTS,
    DOWNLOAD_COUNTS,
    SITE,
    PRIVATE_CHART_IPS,
    CHART_URL_KEYS,
    TRUST_PROXY,
    RATE_LIMIT,
    INGEST_RATE_LIMIT,
    REDIS_URL,
  } = parsed.data;
  const { NGINX_ORIGINS, NGINX_LISTEN, NGINX_REAL_IP_FROM, DEPLOY_DIST_DIR, ORIGIN_URL } = parsed.data;
  const { NGINX_PUBLISH_ORIGIN, PUBLISH, PUBLISH_MAX_BYTES, AFTER_SWAP } = parsed.data;
  const { PUBLIC_URL, WEBHOOK_RETRY_BASE_MS, HEADERS_TIMEOUT, REQUEST_TIMEOUT, MAX_CONNECTIONS } = parsed.data;
  return {
    port: PORT,
    host: HOST,
    dataDir: resolve(DATA_DIR),
    distDir: resolve(DIST_DIR),
    storageDir: resolve(STORAGE_DIR),
    buildCacheDir: resolve(BUILD_CACHE_DIR ?? `${DIST_DIR}/.cache`),
    cacheMaxBytes: CACHE_MAX_BYTES,
    imageCache: IMAGE_CACHE === 'on',
    logRequests: LOG_REQUESTS === 'on',
    site: SITE === 'on',
    downloadCounts: DOWNLOAD_COUNTS === 'on',
    privateChartIps: PRIVATE_CHART_IPS,
    chartUrlKeys: CHART_URL_KEYS,
    trustProxy: TRUST_PROXY,
    rateLimit: RATE_LIMIT,
    ingestRateLimit: INGEST_RATE_LIMIT,
    redisUrl: REDIS_URL,
    deploy: {
      origins: NGINX_ORIGINS,
      listen: NGINX_LISTEN,
      realIpFrom: NGINX_REAL_IP_FROM,
      distDir: DEPLOY_DIST_DIR,
      originUrl: ORIGIN_URL,
      publicUrl: PUBLIC_URL ?? ORIGIN_URL,
      publishOrigin: NGINX_PUBLISH_ORIGIN ?? NGINX_ORIGINS[0]!,
      publishMaxBytes: PUBLISH_MAX_BYTES,
    },
    publicUrl: PUBLIC_URL ?? ORIGIN_URL,
    webhookRetryBaseMs: WEBHOOK_RETRY_BASE_MS,
    headersTimeoutMs: HEADERS_TIMEOUT,
    requestTimeoutMs: REQUEST_TIMEOUT,
    maxConnections: MAX_CONNECTIONS,
    publish: { enabled: PUBLISH === 'on', maxBytes: PUBLISH_MAX_BYTES, afterSwap: AFTER_SWAP },
  };
}

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
};

/** `268435456`, `500MB`, `1.5GiB` (any letter case) -> bytes; undefined when not a size. */
function parseByteSize(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*$/i.exec(text);
  if (!match) return undefined;
  const bytes = Number(match[1]) * BYTE_UNITS[(match[2] ?? '').toLowerCase()]!;
  return Number.isSafeInteger(Math.floor(bytes)) ? Math.floor(bytes) : undefined;
}

const MILLISECONDS_PER: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/** `10s`, `500ms`, `1.5m` -> milliseconds, from 100 ms to an hour; undefined otherwise. */
function parseMilliseconds(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)\s*$/i.exec(text);
  if (!match) return undefined;
  const ms = Math.round(Number(match[1]) * MILLISECONDS_PER[match[2]!.toLowerCase()]!);
  return ms >= 100 && ms <= 3_600_000 ? ms : undefined;
}

/** What an empty environment configures: the build's settings when a caller passes none (tests, benchmarks). */
const DEFAULTS = readConfig({});
export const DEFAULT_DEPLOY: DeployOptions = DEFAULTS.deploy;
export const DEFAULT_RATE_LIMIT: RateLimitPolicy | null = DEFAULTS.rateLimit;
export const DEFAULT_CACHE_MAX_BYTES: number = DEFAULTS.cacheMaxBytes;
export const DEFAULT_PUBLIC_URL: string = DEFAULTS.publicUrl;
export const DEFAULT_PUBLISH_MAX_BYTES: number = DEFAULTS.publish.maxBytes;
/**
 * How long an origin keeps an idle connection open (Node's own default, made explicit). A proxy in
 * front must close its idle connections first (the generated nginx.conf: a second sooner): a
 * request sent on a connection the origin is closing at that moment is lost, and nginx answers
 * 502 for a POST, which it never retries.
 */
export const ORIGIN_KEEP_ALIVE_MS = 5_000;

export const DEFAULT_CONNECTION_LIMITS: Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'maxConnections'> = {
  headersTimeoutMs: DEFAULTS.headersTimeoutMs,
  requestTimeoutMs: DEFAULTS.requestTimeoutMs,
  maxConnections: DEFAULTS.maxConnections,
};
