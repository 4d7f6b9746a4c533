import { createImageRenderer, type ImageRenderer } from './brands/render.ts';
import { createByteCache, type ByteCache, type CacheBudget } from './byte-cache.ts';
import { idempotencyStore, type IdempotencyStore } from './charts/idempotency.ts';
import { sampleStore, type SampleStore } from './charts/samples.ts';
import { CHART_CACHE } from './charts/server-state.ts';
import { serverStore, type ServerStore } from './charts/servers.ts';
import { chartUrlKeys } from './charts/signed-url.ts';
import { DEFAULT_PUBLIC_URL } from './config.ts';
import { createDownloadCounter, type DownloadCounter } from './downloads/counter.ts';
import { downloadStore } from './downloads/store.ts';
import { STDERR_LINES, type Log } from './helpers/log.ts';
import { addressAllowList } from './http/addresses.ts';
import { trustedProxies } from './http/client-address.ts';
import { createFileCache, type FileCache } from './http/file-cache.ts';
import { createRateLimiter, type RateLimiter, type RateLimitPolicy } from './http/rate-limit.ts';
import type { Redis } from 'ioredis';
import type { Storage } from './storage.ts';
import { publishTokenStore, type PublishTokenStore } from './publish-tokens/store.ts';
import type { Publishing } from './publish/publishing.ts';
import type { Tree } from './tree/open.ts';
import { userTokenStore, type UserTokenStore } from './users.ts';

/** What route families need, passed in: the build, the origin and tests each make their own. */
export type AppContext = StateContext & {
  /** The tree answers come from: the one being built, or the one served. */
  tree: () => Tree;
  files: FileCache;
  imageCache: ByteCache;
  renderer: ImageRenderer;
  /** Render every brand query, skipping precomputed files and the cache (benchmarks, debugging). */
  renderAlways?: boolean;
  /** PUBLIC_URL: absolute links in answers that need them (the Atom feeds, signed chart URLs). */
  publicUrl: string;
  /** JAR downloads, counted after their answer and read back (issue 17). */
  downloads: DownloadCounter;
  /** CHART_URL_KEYS (the first signs chart URLs, every one is accepted), else the key kept in the store; read once. */
  chartUrlKeys: () => Promise<string[]>;
  /** Where this origin publishes (issue 30); null: PUBLISH=off, or the build. */
  publishing: Publishing | null;
};

/** Everything kept in storage (files by default, Redis at scale), and the clock charts read. */
export type StateContext = {
  servers: ServerStore;
  samples: SampleStore;
  /** Ingestion's Idempotency-Key, remembered 24 hours per server. */
  idempotency: IdempotencyStore;
  /** INGEST_RATE_LIMIT: ingestion requests per server key; null: not limited. */
  ingestLimiter: RateLimiter | null;
  tokens: UserTokenStore;
  /** Publishing tokens (issue 30), by digest: read on every publishing request, never cached. */
  publishTokens: PublishTokenStore;
  chartCache: ByteCache;
  now: () => number;
  /** PRIVATE_CHART_IPS: may a private chart be read from this address? */
  privateChartsFrom: (address: string | undefined) => boolean;
  /** TRUST_PROXY: is this peer a proxy whose X-Forwarded-For is believed? */
  trustProxy: (address: string) => boolean;
};

type StateOptions = {
  now?: () => number;
  privateChartIps?: string[];
  trustProxy?: string[];
  redis?: Redis | undefined;
  cacheBudget?: CacheBudget | undefined;
  /** Where the stores and caches warn, each through a child naming it; default plain lines on stderr. */
  log?: Log | undefined;
  /** INGEST_RATE_LIMIT; null or absent: ingestion is not limited. */
  ingestRateLimit?: RateLimitPolicy | null | undefined;
  /** The origin's journaled samples (charts/samples/journaled.ts); absent: sampleStore over the storage. */
  samples?: SampleStore | undefined;
};

/**
 * Everything a route family needs, over one store: the origin's (files or Redis), the build's and
 * the tests' (memory). `imageCache` defaults to the store's own brand-image cache.
 */
export function createAppContext(
  storage: Storage,
  options: StateOptions & {
    tree: () => Tree;
    imageCache?: ByteCache;
    renderAlways?: boolean;
    publicUrl?: string;
    chartUrlKeys?: string[];
    /** DOWNLOAD_COUNTS: false counts no download; the counts already stored are still answered. */
    countDownloads?: boolean;
    publishing?: Publishing | null;
  },
): AppContext {
  const state = createStateContext(storage, options);
  const log = options.log ?? STDERR_LINES;
  const cacheOptions = { now: state.now, log: log.child({ component: 'cache' }), budget: options.cacheBudget };
  const downloadsLog = log.child({ component: 'downloads' });
  return {
    ...state,
    tree: options.tree,
    files: createFileCache(),
    imageCache: options.imageCache ?? createByteCache(storage, 'brand-images', cacheOptions),
    renderer: createImageRenderer(),
    renderAlways: options.renderAlways,
    publicUrl: options.publicUrl ?? DEFAULT_PUBLIC_URL,
    downloads: createDownloadCounter({
      store: downloadStore(storage, options.redis, state.now, { log: downloadsLog }),
      now: state.now,
      trustProxy: state.trustProxy,
      enabled: options.countDownloads ?? true,
      log: downloadsLog,
    }),
    chartUrlKeys: onceResolved(() => chartUrlKeys(options.chartUrlKeys ?? [], storage, options.redis)),
    publishing: options.publishing ?? null,
  };
}

/** `read`'s answer, asked again only after a failure (the store was down). */
function onceResolved<T>(read: () => Promise<T>): () => Promise<T> {
  let answer: Promise<T> | undefined;
  return () =>
    (answer ??= read().catch((error: unknown) => {
      answer = undefined;
      throw error;
    }));
}

export function createStateContext(storage: Storage, options: StateOptions = {}): StateContext {
  const now = options.now ?? Date.now;
  const log = options.log ?? STDERR_LINES;
  return {
    servers: serverStore(storage),
    samples: options.samples ?? sampleStore(storage, options.redis, log.child({ component: 'samples' })),
    idempotency: idempotencyStore(storage, options.redis, { log: log.child({ component: 'ingest' }) }),
    ingestLimiter: options.ingestRateLimit
      ? createRateLimiter(options.ingestRateLimit, now, options.redis, log.child({ component: 'rate-limit' }), 'ingest')
      : null,
    tokens: userTokenStore(storage),
    publishTokens: publishTokenStore(storage, options.redis),
    chartCache: createByteCache(storage, CHART_CACHE, {
      now,
      log: log.child({ component: 'cache' }),
      budget: options.cacheBudget,
    }),
    now,
    privateChartsFrom: addressAllowList(options.privateChartIps ?? []),
    trustProxy: trustedProxies(options.trustProxy ?? []),
  };
}
