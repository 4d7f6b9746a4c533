import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeRequest, sendNodeResponse } from 'srvx/node';
import type { ServerRequest } from 'srvx';
import type { H3 } from 'h3';
import { createOrigin } from './app.ts';
import { openJournaledSampleStore, type JournaledSampleStore } from './charts/samples/journaled.ts';
import type { SampleStore } from './charts/samples.ts';
import { guarded } from './http/after-response.ts';
import { logRequests, type RequestLog } from './http/request-log.ts';
import { createAppContext, type AppContext } from './context.ts';
import { createRateLimiter, type RateLimitPolicy } from './http/rate-limit.ts';
import { createCacheBudget, type CacheBudget } from './byte-cache.ts';
import {
  DEFAULT_CACHE_MAX_BYTES,
  DEFAULT_CONNECTION_LIMITS,
  DEFAULT_PUBLIC_URL,
  ORIGIN_KEEP_ALIVE_MS,
} from './config.ts';
import { STDERR_LINES, type Log } from './helpers/log.ts';
import { throttledLog } from './helpers/throttled-log.ts';
import { redisReady } from './redis.ts';
import { createFileStorage, createRedisStorage, storageDirExposure, type StateStore, type Storage } from './storage.ts';
import { currentTreeDir, openTree } from './tree/open.ts';
import { createPublishing, type PublishSettings } from './publish/publishing.ts';
import { followCurrentTree } from './tree/follow.ts';
import { startDeliveryLoop, type DeliveryLoop } from './webhooks/deliver.ts';
import { webhookStore } from './webhooks/store.ts';

export type RunningOrigin = {
  url: string;
  server: Server;
  /** Graceful: stop accepting, finish the requests in flight, then let go of Redis. */
  close: () => Promise<void>;
};

export type OriginOptions = {
  distDir: string;
  host: string;
  port: number;
  /** The embedded store (tests pass memory); without one, files in storageDir. Unused when redisUrl is set. */
  storage?: Storage;
  storageDir?: string;
  imageCache?: boolean;
  privateChartIps?: string[];
  /** CHART_URL_KEYS: signed chart URLs' HMAC keys, newest first. */
  chartUrlKeys?: string[];
  /** DOWNLOAD_COUNTS: false counts no download (default true). */
  downloadCounts?: boolean;
  trustProxy?: string[];
  /** SPEC 8's limit; null or absent: no limit. */
  rateLimit?: RateLimitPolicy | null;
  /** INGEST_RATE_LIMIT: ingestion requests per server key; null or absent: no limit. */
  ingestRateLimit?: RateLimitPolicy | null;
  /** REDIS_URL: all state (rate limit, caches, tokens, servers, samples) in Redis, shared by every origin. */
  redisUrl?: string;
  /** CACHE_MAX_BYTES: what the embedded store's render caches may hold (Redis: TTLs and its own memory policy). */
  cacheMaxBytes?: number;
  /** Where request log lines go (main: stdout, one JSON object per line); none when absent. */
  log?: (entry: RequestLog) => void;
  /**
   * Where warnings (Redis outages, the rate limit failing open, a failed publish or AFTER_SWAP) and
   * progress (a publish's build, AFTER_SWAP's output) go, each part through a child naming it (main:
   * its pino logger, stdout); default plain lines on stderr.
   */
  logger?: Log;
  now?: () => number;
  /** PUBLISH (issue 30): where this origin publishes, run with this process's environment; absent or null: it does not. */
  publishing?: PublishSettings | null;
  /** PUBLIC_URL: absolute download links in webhook messages; default ORIGIN_URL's default. */
  publicUrl?: string;
  /** WEBHOOK_RETRY_BASE_MS, and the attempt timeout (10 s): tests shorten them. */
  webhookRetryBaseMs?: number;
  webhookTimeoutMs?: number;
  /** HEADERS_TIMEOUT, REQUEST_TIMEOUT (ms): a request's headers, and all of it, must have arrived within these (default 10 s, 60 s). */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** MAX_CONNECTIONS: connections beyond this many open ones are closed at once (default 768). */
  maxConnections?: number;
  /** How often dist/current is read besides watching dist/ (default 200 ms): tests lengthen it to see the watcher work alone. */
  treePollMs?: number;
};

/** Serves dist/current on host:port (0 picks a free port) and follows rebuilds without a restart. */
export async function startOrigin(options: OriginOptions): Promise<RunningOrigin> {
  const log = options.logger ?? STDERR_LINES;
  // Each part writes through a child of its own: every line names the part in `component`.
  const logFor = (component: string) => log.child({ component });
  const follower = await followTree(options, logFor('tree'));
  const store = await openOriginStore(options, log);
  const cacheBudget = store.redis
    ? undefined
    : createCacheBudget(store.storage, {
        maxBytes: options.cacheMaxBytes ?? DEFAULT_CACHE_MAX_BYTES,
        log: logFor('cache'),
        now: options.now,
      });
  // The embedded store's ingestion journal: what a killed origin journaled is folded before listening.
  const samples = store.redis ? null : await openJournaledSampleStore(store.storage, logFor('samples'), options.now);
  const context = createOriginContext(options, store, cacheBudget, follower, log, samples);
  const limiter = options.rateLimit
    ? createRateLimiter(options.rateLimit, context.now, store.redis, logFor('rate-limit'))
    : null;
  const app = createOrigin(context, limiter);
  const logRequest = options.log ? logRequests(options.log, context.trustProxy) : undefined;
  const server = createOriginServer(app, logRequest, connectionLimits(options), logFor('connections'));
  await listen(server, options.port, options.host);
  // Release announcements wait in the store's outbox until an origin delivers them (DESIGN: never from the CLI alone).
  const deliveries = startDeliveryLoop(webhookStore(store.storage, store.redis), {
    publicUrl: options.publicUrl ?? DEFAULT_PUBLIC_URL,
    now: context.now,
    log: logFor('webhooks'),
    servedVersion: (versionId) => follower.current().catalog.byId.get(versionId),
    servedProject: () => follower.current().project,
    retryBaseMs: options.webhookRetryBaseMs,
    timeoutMs: options.webhookTimeoutMs,
  });
  return {
    url: serverUrl(server),
    server,
    close: () =>
      closeOrigin({
        ...{ follower, cacheBudget, server, deliveries, samples, store },
        downloads: context.downloads,
        publishing: context.publishing,
      }),
  };
}

type TreeFollower = ReturnType<typeof followCurrentTree>;

/** Opens dist/current (refusing to start without one) and follows what it points to from then on. */
async function followTree(options: OriginOptions, log: Log): Promise<TreeFollower> {
  const dir = await currentTreeDir(options.distDir);
  if (!dir) throw new Error(`No built tree at ${options.distDir}/current: run \`npm run build\` first`);
  return followCurrentTree(
    options.distDir,
    await openTree(dir, undefined, log),
    (error, tree) =>
      console.error(
        `[tree] could not open ${tree}; still serving the previous tree (said again at most once a minute):`,
        error,
      ),
    { log, intervalMs: options.treePollMs },
  );
}

/** The origin's state store; `own`: opened here (Redis, or files in storageDir), so closed here too. */
type OriginStore = StateStore & { own: boolean };

async function openOriginStore(options: OriginOptions, log: Log): Promise<OriginStore> {
  const exposure = options.redisUrl || options.storage ? null : await storageDirExposure(options.storageDir!);
  if (exposure) log.child({ component: 'storage' }).warn(exposure);
  const redisLog = log.child({ component: 'redis' });
  // The store the origin opens itself (Redis, or files in storageDir) it also closes; a passed one is the caller's.
  const { storage, redis } = options.redisUrl
    ? createRedisStorage(options.redisUrl, redisLog)
    : { storage: options.storage ?? createFileStorage(options.storageDir!), redis: undefined };
  const own = !options.storage || Boolean(redis);
  // Answer from the first request with Redis connected when it is up; when it is not, start anyway
  // (static answers need no state) and let the client reconnect.
  if (redis && !(await redisReady(redis, 3000)))
    redisLog.warn('[redis] not reachable at start; answers that need state say 503 until it is');
  return { storage, redis, own };
}

function createOriginContext(
  options: OriginOptions,
  { storage, redis }: OriginStore,
  cacheBudget: CacheBudget | undefined,
  follower: TreeFollower,
  log: Log,
  samples: SampleStore | null,
): AppContext {
  const { now, privateChartIps, trustProxy } = options;
  // AFTER_SWAP copies what dist/current points to (the link itself included), read when each run starts.
  const servedTree = async () => (await currentTreeDir(options.distDir)) ?? follower.current().dir;
  return createAppContext(storage, {
    ...{ now, privateChartIps, trustProxy },
    redis,
    cacheBudget,
    log,
    ingestRateLimit: options.ingestRateLimit,
    samples: samples ?? undefined,
    tree: follower.current,
    renderAlways: options.imageCache === false,
    publicUrl: options.publicUrl ?? DEFAULT_PUBLIC_URL,
    chartUrlKeys: options.chartUrlKeys ?? [],
    countDownloads: options.downloadCounts ?? true,
    publishing: options.publishing
      ? createPublishing(options.publishing, {
          ...{ servedTree, storage, redis, now: now ?? Date.now },
          log: log.child({ component: 'publish' }),
          nextTree: follower.next,
        })
      : null,
  });
}

type ConnectionLimits = typeof DEFAULT_CONNECTION_LIMITS;
type LogRequest = ReturnType<typeof logRequests>;

/** The HTTP server: its timeouts and connection cap, each request answered by the app. */
function createOriginServer(app: H3, logRequest: LogRequest | undefined, limits: ConnectionLimits, log: Log): Server {
  const server = createServer(
    {
      // Node's defaults let a client that trickles its headers hold a socket for a minute, or its
      // body for five, and check only every 30 s: a few hundred slow clients would take every socket.
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, limits.headersTimeoutMs / 4)),
      keepAliveTimeout: ORIGIN_KEEP_ALIVE_MS,
    },
    (req, res) => answerNodeRequest(app, logRequest, req, res),
  );
  server.maxConnections = limits.maxConnections;
  const warnDropped = throttledLog((line) => log.warn(line));
  server.on('drop', () =>
    warnDropped(
      `[connections] ${limits.maxConnections} connections open (MAX_CONNECTIONS): new ones are closed at once (said at most once a minute)`,
    ),
  );
  return server;
}

/**
 * srvx's Node adapter, unrolled so that the request log holds the h3 context of its request.
 * Nothing a request does may stop the process: a throw here, or a rejection nobody handles, would.
 */
function answerNodeRequest(
  app: H3,
  logRequest: LogRequest | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  try {
    const request = new NodeRequest({ req, res }) as ServerRequest;
    if (logRequest) logRequest(req, res, (request.context = {}));
    const answer = app.fetch(request);
    const send = (response: Response) => {
      // Answered before the body arrived (a 401, 413 or 400 on a POST): Node would otherwise read
      // and discard the rest to keep the connection, for as long as the client cares to trickle it.
      if (!req.complete && hasBody(req) && !res.headersSent) res.setHeader('connection', 'close');
      return sendNodeResponse(res, response).catch((error: unknown) => failSend(res, error));
    };
    if (typeof (answer as Promise<Response>).then === 'function')
      (answer as Promise<Response>).then(send, (error: unknown) => failSend(res, error));
    else void send(answer as Response);
  } catch (error) {
    failSend(res, error);
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

function serverUrl(server: Server): string {
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return `http://${host}:${port}`;
}

/**
 * Graceful, in this order: stop following the tree and sweeping the caches; stop accepting and
 * finish the requests in flight and the deliveries under way; store the last counted downloads
 * and fold the journaled player counts; then let go of Redis and of the store the origin opened.
 */
async function closeOrigin(parts: {
  follower: TreeFollower;
  cacheBudget: CacheBudget | undefined;
  server: Server;
  deliveries: DeliveryLoop;
  downloads: AppContext['downloads'];
  samples: JournaledSampleStore | null;
  store: OriginStore;
  publishing: AppContext['publishing'];
}): Promise<void> {
  const { redis, storage } = parts.store;
  parts.follower.stop();
  parts.cacheBudget?.stop();
  await Promise.all([closeServer(parts.server), parts.deliveries.stop()]);
  // The build worker makes the changes it was given (the answers are sent), then exits.
  parts.publishing?.changes.stop();
  // The downloads counted last are stored before the store is let go of.
  await parts.downloads.close();
  // The journaled player counts are folded into their days, as far as the disk lets them.
  await parts.samples?.close();
  // quit() lets pending commands finish; while Redis is unreachable, stop reconnecting instead.
  await redis?.quit().catch(() => redis.disconnect());
  if (parts.store.own) await storage.dispose();
}

/** Does the request carry a body (which `complete` says was read to its end)? */
const hasBody = (req: IncomingMessage) =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** The connection limits: the defaults, and what a caller set over them (an undefined option keeps the default). */
function connectionLimits(options: OriginOptions): ConnectionLimits {
  const { headersTimeoutMs, requestTimeoutMs, maxConnections } = options;
  const set = Object.fromEntries(
    Object.entries({ headersTimeoutMs, requestTimeoutMs, maxConnections }).filter(([, value]) => value !== undefined),
  ) as Partial<ConnectionLimits>;
  return { ...DEFAULT_CONNECTION_LIMITS, ...set };
}

/**
 * Stops accepting connections and resolves once every request in flight has been answered. A
 * keep-alive connection is closed as soon as its request is done rather than at its idle timeout.
 */
async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  server.closeIdleConnections();
  try {
    await closed;
  } finally {
    clearInterval(sweep);
  }
}

/**
 * An answer that could not be made or written (a stream failed midway): 500 if nothing was sent
 * yet, else cut. Guarded: the connection may be half gone by now.
 */
const failSend = guarded('send', (res: ServerResponse, error: unknown) => {
  console.error('[send] could not write the answer:', error);
  if (res.headersSent || res.destroyed) res.destroy();
  else {
    res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'x-content-type-options': 'nosniff' });
    res.end(INTERNAL_ERROR);
  }
});

const INTERNAL_ERROR = JSON.stringify({ error: 'Internal server error' });
