import { HTTPError, type H3Event, type Middleware } from 'h3';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { requestClient } from './client-address.ts';
import { throttledLog } from '../throttled-log.ts';
import { isChargedByRoute, type EndpointTable } from './endpoints.ts';
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
export type RateLimitWindow = { key: string; resetSeconds: number };

/**
 * A fixed-window counter per client key, kept by rate-limiter-flexible: in memory, or in Redis
 * (REDIS_URL) so that every origin counts against one limit. The window is taken from the injected
 * clock, so tests move time instead of sleeping.
 */
export function createRateLimiter(
  policy: RateLimitPolicy,
  now: () => number,
  redis?: Redis,
  log: (line: string) => void = console.warn,
) {
  // Keys outlive their window by one more, so the store's own expiry only collects old windows.
  const options = { points: policy.limit, duration: policy.windowSeconds * 2, keyPrefix: 'depot:rate' };
  const counter = redis
    ? new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true })
    : new RateLimiterMemory(options);
  const warnOutage = throttledLog(log, now);
  // After a failure the store is left alone for a moment (real time, not the window's clock): a
  // Redis that hangs would otherwise cost every request the client's whole command timeout.
  let storeRestsUntil = -Infinity;
  const windowMs = policy.windowSeconds * 1000;
  return {
    policy,
    /** The window a request of this client arriving now counts in, whenever it is charged. */
    windowOf(clientKey: string): RateLimitWindow {
      const time = now();
      const window = Math.floor(time / windowMs);
      return { key: `${clientKey}:${window}`, resetSeconds: Math.ceil(((window + 1) * windowMs - time) / 1000) };
    },
    /** Counts one request in its window; null when the store cannot be reached: the limit fails open. */
    // One .then rather than async/await: every promise hop shows in requests/s.
    take(window: RateLimitWindow): Promise<RateLimitState | null> {
      // The clock is read only after a failure: this runs on every limited request.
      if (storeRestsUntil !== -Infinity && performance.now() < storeRestsUntil) return Promise.resolve(null);
      const { resetSeconds } = window;
      return counter.consume(window.key).then(
        (result) => ({
          allowed: true,
          remaining: Math.max(0, policy.limit - result.consumedPoints),
          resetSeconds,
          policy,
        }),
        (result: unknown) => {
          if (result instanceof RateLimiterRes) return { allowed: false, remaining: 0, resetSeconds, policy };
          // Serving matters more than counting: answer unlimited, and say so (once a minute at most).
          storeRestsUntil = performance.now() + STORE_REST_MS;
          warnOutage(
            `[rate-limit] store unavailable, requests are not limited: ${result instanceof Error ? result.message : String(result)}`,
          );
          return null;
        },
      );
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;

/** Headers every limited answer carries (IETF RateLimit fields, and the legacy X-RateLimit ones; CORS exposes them). */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  const { remaining, resetSeconds, policy } = state;
  return {
    'ratelimit-policy': `"default";q=${policy.limit};w=${policy.windowSeconds}`,
    ratelimit: `"default";r=${remaining};t=${resetSeconds}`,
    'x-ratelimit-limit': `${policy.limit}`,
    'x-ratelimit-remaining': `${remaining}`,
    'x-ratelimit-reset': `${resetSeconds}`,
  };
}

export function tooManyRequests(state: RateLimitState): HTTPError {
  const { limit, windowSeconds } = state.policy;
  return new HTTPError({
    status: 429,
    message: `Rate limit of ${limit} requests per ${windowSeconds} seconds exceeded; retry in ${state.resetSeconds} seconds`,
    headers: { ...rateLimitHeaders(state), 'retry-after': String(state.resetSeconds) },
  });
}

/**
 * Counts limited requests per client (SPEC 8's endpoints: those documented with a 429). Brand images
 * and server charts are charged by their routes instead, at the point where they know the request
 * counts (chargeLimit): precomputed and cached images and owners' private charts do not. One promise
 * per request and no await on the way to other answers: this runs on every download and metadata
 * request.
 */
export function limitRequests(
  limiter: RateLimiter,
  trustProxy: (address: string) => boolean,
  endpoints: EndpointTable,
): Middleware {
  return (event, next) => {
    if (!endpoints.findOperation(event.req.method, event.url.pathname)?.limited) return next();
    const window = limiter.windowOf(requestClient(event, trustProxy).key);
    if (isChargedByRoute(event.url.pathname)) return chargedByRoute(event, next, limiter, window);
    return limiter.take(window).then((state) => {
      if (!state) return next();
      event.context.rateLimit = { headers: rateLimitHeaders(state) };
      if (!state.allowed) throw tooManyRequests(state);
      return next();
    });
  };
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
    (charged ??= limiter.take(window).then((state) => {
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
