import { HTTPError, type H3Event, type Middleware } from 'h3';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { requestClient } from './client-address.ts';
import { STDERR_LINES, type Log } from '../helpers/log.ts';
import { throttledLog } from '../helpers/throttled-log.ts';
import type { EndpointTable } from './endpoints.ts';
import type { RateLimitPolicy } from './rate-limit-policy.ts';
import type { RequestLimit } from './event-context.ts';

/** How long requests go unlimited, without asking the store, after it failed. */
const STORE_REST_MS = 2000;

export type RateLimitState = {
  allowed: boolean;
  remaining: number;
  resetSeconds: number;
  policy: RateLimitPolicy;
};

/** The counter a request is charged to: the window of its client at the moment it arrived. */
export type RateLimitWindow = { client: string; index: number; resetSeconds: number };

/** A charge's outcome: its state now (in memory), later (Redis), or null when the store is down. */
type Charge = RateLimitState | null | Promise<RateLimitState | null>;

/**
 * A fixed-window counter per client key: in this process, or in Redis (REDIS_URL, through
 * rate-limiter-flexible) so that every origin counts against one limit. The window is taken from
 * the injected clock, so tests move time instead of sleeping.
 */
export function createRateLimiter(
  policy: RateLimitPolicy,
  now: () => number,
  redis?: Redis,
  log: Log = STDERR_LINES,
  name = 'default',
) {
  const windowMs = policy.windowSeconds * 1000;
  const state = (consumed: number, resetSeconds: number): RateLimitState => ({
    allowed: consumed <= policy.limit,
    remaining: Math.max(0, policy.limit - consumed),
    resetSeconds,
    policy,
  });
  // Each limiter counts apart in Redis: SPEC 8's under depot:rate, others under depot:rate:<name>.
  const keyPrefix = name === 'default' ? 'depot:rate' : `depot:rate:${name}`;
  const warnOutage = throttledLog((line) => log.warn(line), now);
  const count = redis ? redisCounter(policy, redis, keyPrefix, warnOutage) : memoryCounter();
  return {
    policy,
    /** The window a request of this client arriving now counts in, whenever it is charged. */
    windowOf(client: string): RateLimitWindow {
      const time = now();
      const index = Math.floor(time / windowMs);
      return { client, index, resetSeconds: Math.ceil(((index + 1) * windowMs - time) / 1000) };
    },
    /** Counts one request in its window; null when the store cannot be reached: the limit fails open. */
    take(window: RateLimitWindow): Charge {
      const consumed = count(window);
      if (typeof consumed === 'number') return state(consumed, window.resetSeconds);
      return consumed.then((points) => (points === null ? null : state(points, window.resetSeconds)));
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;

/**
 * This process's counts, kept for the current window and the one before (a request is charged in
 * the window it arrived in, which may have just ended). Synchronous on purpose, and so not
 * rate-limiter-flexible's RateLimiterMemory: its promise made every limited answer asynchronous,
 * which measured 12 µs of CPU time per metadata answer (about 14%; `npm run bench -- --only serving`).
 */
function memoryCounter() {
  let current = { index: -Infinity, counts: new Map<string, number>() };
  let previous = current;
  return (window: RateLimitWindow): number => {
    if (window.index > current.index) {
      previous = window.index === current.index + 1 ? current : { index: window.index - 1, counts: new Map() };
      current = { index: window.index, counts: new Map() };
    }
    const counts =
      window.index === current.index ? current.counts : window.index === previous.index ? previous.counts : null;
    if (!counts) return 1; // A window older than the previous one is over: nothing is left to count against.
    const consumed = (counts.get(window.client) ?? 0) + 1;
    counts.set(window.client, consumed);
    return consumed;
  };
}

/**
 * Counts in Redis, shared by every origin. After a failure the store is left alone for a moment
 * (real time, not the window's clock): a Redis that hangs would otherwise cost every request the
 * client's whole command timeout. Serving matters more than counting: while it is down, null.
 */
function redisCounter(policy: RateLimitPolicy, redis: Redis, keyPrefix: string, warnOutage: (line: string) => void) {
  // Keys outlive their window by one more, so the store's own expiry only collects old windows.
  const counter = new RateLimiterRedis({
    points: policy.limit,
    duration: policy.windowSeconds * 2,
    keyPrefix,
    storeClient: redis,
    rejectIfRedisNotReady: true,
  });
  let storeRestsUntil = -Infinity;
  return (window: RateLimitWindow): Promise<number | null> => {
    if (storeRestsUntil !== -Infinity && performance.now() < storeRestsUntil) return Promise.resolve(null);
    return counter.consume(`${window.client}:${window.index}`).then(
      (result) => result.consumedPoints,
      (result: unknown) => {
        if (result instanceof RateLimiterRes) return result.consumedPoints;
        storeRestsUntil = performance.now() + STORE_REST_MS;
        warnOutage(
          `[rate-limit] store unavailable, requests are not limited: ${result instanceof Error ? result.message : String(result)}`,
        );
        return null;
      },
    );
  };
}

/**
 * Headers every limited answer carries (IETF RateLimit fields, and the legacy X-RateLimit ones; CORS
 * exposes them). `name`: the policy's, `default` for SPEC 8's limit per client, `ingest` per server key.
 */
function rateLimitHeaders(state: RateLimitState, name = 'default'): Record<string, string> {
  const { remaining, resetSeconds, policy } = state;
  return {
    'ratelimit-policy': `"${name}";q=${policy.limit};w=${policy.windowSeconds}`,
    ratelimit: `"${name}";r=${remaining};t=${resetSeconds}`,
    'x-ratelimit-limit': `${policy.limit}`,
    'x-ratelimit-remaining': `${remaining}`,
    'x-ratelimit-reset': `${resetSeconds}`,
  };
}

/** 429 over a limit; `name` and `what` say which (SPEC 8's `Rate limit` by default). */
function tooManyRequests(state: RateLimitState, name = 'default', what = 'Rate limit'): HTTPError {
  const { limit, windowSeconds } = state.policy;
  return new HTTPError({
    status: 429,
    message: `${what} of ${limit} requests per ${windowSeconds} seconds exceeded; retry in ${state.resetSeconds} seconds`,
    headers: { ...rateLimitHeaders(state, name), 'retry-after': String(state.resetSeconds) },
  });
}

/**
 * Counts limited requests per client (SPEC 8's endpoints: those documented with a 429). Brand images
 * and server charts are charged by their routes instead, at the point where they know the request
 * counts (chargeLimit): precomputed and cached images and owners' private charts do not. No promise
 * on the way to other answers when the counts are in memory: this runs on every download and
 * metadata request.
 */
export function limitRequests(
  limiter: RateLimiter,
  trustProxy: (address: string) => boolean,
  endpoints: EndpointTable,
): Middleware {
  return (event, next) => {
    const operation = endpoints.findOperation(event.req.method, event.url.pathname);
    if (!operation?.limited) return next();
    const window = limiter.windowOf(requestClient(event, trustProxy).key);
    if (operation.chargedByRoute) return chargedByRoute(event, next, limiter, window);
    const charge = limiter.take(window);
    if (!(charge instanceof Promise)) return admit(event, charge, next);
    return charge.then((state) => admit(event, state, next));
  };
}

/** Lets a charged request through with its RateLimit fields, or answers 429 over the limit. */
function admit(event: H3Event, state: RateLimitState | null, next: () => unknown) {
  if (!state) return next();
  event.context.rateLimit = { headers: rateLimitHeaders(state) };
  if (!state.allowed) throw tooManyRequests(state);
  return next();
}

/**
 * SPEC 8's exemption, decided by the route: it calls chargeLimit where an answer needs work. The
 * request is counted in the window it arrived in, whenever it is charged. An error answer counts,
 * charged once it is known; it keeps its own status even over the limit.
 */
function chargedByRoute(event: H3Event, next: () => unknown, limiter: RateLimiter, window: RateLimitWindow) {
  const limit: RequestLimit = {};
  let charged: Promise<void> | undefined;
  const charge = () =>
    (charged ??= Promise.resolve(limiter.take(window)).then((state) => {
      if (!state) return;
      limit.headers = rateLimitHeaders(state);
      if (!state.allowed) throw tooManyRequests(state);
    }));
  limit.charge = charge;
  event.context.rateLimit = limit;
  // (A promise around next(): a handler may throw before its first await.) The error answer keeps
  // its own status even when its charge finds the limit spent: throwing in finally replaces the 429.
  return new Promise((resolve) => resolve(next())).catch((error: unknown) =>
    charge().finally(() => {
      throw error;
    }),
  );
}

/**
 * Counts this request against SPEC 8's limit, once: 429 when it is over. Brand image and server
 * chart routes call it just before they render; elsewhere (the build, unlimited origins) it does nothing.
 */
export async function chargeLimit(event: H3Event): Promise<void> {
  await event.context.rateLimit?.charge?.();
}

export type { RateLimitPolicy };

/**
 * Counts one request against `limiter` under `key` (not the client address: e.g. a server's ingest
 * key), and answers its RateLimit fields, or throws 429 over the limit. No fields while the store is down.
 */
export async function chargeKey(
  limiter: RateLimiter,
  key: string,
  name: string,
  what: string,
): Promise<Record<string, string>> {
  const state = await limiter.take(limiter.windowOf(key));
  if (!state) return {};
  if (!state.allowed) throw tooManyRequests(state, name, what);
  return rateLimitHeaders(state, name);
}
