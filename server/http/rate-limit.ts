import { HTTPError, type H3Event, type Middleware } from 'h3';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { requestClient } from './client-address.ts';
import { throttledLog } from '../throttled-log.ts';
import { findOperation } from './endpoints.ts';

/** SPEC 8: 100 requests per 15 minutes per client address. */
export type RateLimitPolicy = { limit: number; windowSeconds: number };

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** How long requests go unlimited, without asking the store, after it failed. */
const STORE_REST_MS = 2000;

/** RATE_LIMIT: `100/15m` (count per window of s, m or h), or `0` for no limit. */
export function parseRateLimit(text: string): RateLimitPolicy | null | undefined {
  if (text.trim() === '0') return null;
  const match = /^(\d{1,7})\/(\d{1,5})([smh])$/.exec(text.trim());
  if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) return undefined;
  return { limit: Number(match[1]), windowSeconds: Number(match[2]) * UNITS[match[3]!]! };
}

export type RateLimitState = {
  allowed: boolean;
  remaining: number;
  resetSeconds: number;
  policy: RateLimitPolicy;
  /** The counter this request was charged to: a refund goes back there, not to the window of its end. */
  windowKey: string;
  window: number;
};

/**
 * A fixed-window counter per client key, kept by rate-limiter-flexible: in memory, or in Redis
 * (REDIS_URL) so that every origin counts against one limit. The window is taken from the injected
 * clock, so tests move time instead of sleeping.
 */
export function createRateLimiter(policy: RateLimitPolicy, now: () => number, redis?: Redis, log: (line: string) => void = console.warn) {
  // Keys outlive their window by one more, so the store's own expiry only collects old windows.
  const options = { points: policy.limit, duration: policy.windowSeconds * 2, keyPrefix: 'depot:rate' };
  const counter = redis ? new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true }) : new RateLimiterMemory(options);
  const warnOutage = throttledLog(log, now);
  // After a failure the store is left alone for a moment (real time, not the window's clock): a
  // Redis that hangs would otherwise cost every request the client's whole command timeout.
  let storeRestsUntil = -Infinity;
  const windowMs = policy.windowSeconds * 1000;
  const at = (key: string) => {
    const time = now();
    const window = Math.floor(time / windowMs);
    return { window, windowKey: `${key}:${window}`, resetSeconds: Math.ceil(((window + 1) * windowMs - time) / 1000) };
  };
  return {
    policy,
    /** Counts one request; null when the store cannot be reached: the limit fails open. */
    // One .then rather than async/await: every promise hop shows in requests/s.
    take(key: string): Promise<RateLimitState | null> {
      // The clock is read only after a failure: this runs on every limited request.
      if (storeRestsUntil !== -Infinity && performance.now() < storeRestsUntil) return Promise.resolve(null);
      const { window, windowKey, resetSeconds } = at(key);
      return counter.consume(windowKey).then(
        (result) => ({ allowed: true, remaining: Math.max(0, policy.limit - result.consumedPoints), resetSeconds, policy, windowKey, window }),
        (result: unknown) => {
          if (result instanceof RateLimiterRes) return { allowed: false, remaining: 0, resetSeconds, policy, windowKey, window };
          // Serving matters more than counting: answer unlimited, and say so (once a minute at most).
          storeRestsUntil = performance.now() + STORE_REST_MS;
          warnOutage(`[rate-limit] store unavailable, requests are not limited: ${result instanceof Error ? result.message : String(result)}`);
          return null;
        },
      );
    },
    /**
     * Hands a request back (answers that do not count: cached brand images, owners' private charts)
     * to the window it was charged in. Once that window is over there is nothing to give back: a
     * refund into the next one would let that window allow one request too many.
     */
    async giveBack(state: RateLimitState): Promise<void> {
      if (Math.floor(now() / windowMs) !== state.window) return;
      await counter.reward(state.windowKey, 1).catch(() => {});
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
 * Counts limited requests per client. Over the limit, most answers are refused at once; brand
 * images and charts still run, because their precomputed or cached answers and owners' private
 * charts do not count (SPEC 8): those routes refuse only what would need work (they read
 * `event.context.overLimit`), and answers that did not count are handed back afterwards.
 * One promise per request and no await on the way to other answers: this runs on every download
 * and metadata request.
 */
export function limitRequests(limiter: RateLimiter, trustProxy: (address: string) => boolean): Middleware {
  return (event, next) => {
    // SPEC 8's endpoints (downloads, metadata, brands, charts): those documented with a 429.
    if (!findOperation(event.req.method, event.url.pathname)?.limited) return next();
    const { key } = requestClient(event, trustProxy);
    return limiter.take(key).then((state) => {
      if (!state) return next();
      event.context.rateLimitHeaders = rateLimitHeaders(state);
      const mayNotCount = isImageOrChart(event.url.pathname);
      if (!state.allowed) {
        if (!mayNotCount) throw tooManyRequests(state);
        event.context.overLimit = state;
      }
      if (!state.allowed || !mayNotCount) return next();
      return Promise.resolve(next()).then(async (response) => {
        if (!counts(event)) await limiter.giveBack(state);
        return response;
      });
    });
  };
}

/**
 * Does a precomputed answer at this path count against SPEC 8's limit? Limited endpoints do, except
 * brand images (SPEC 8: cached answers do not count). Static servers in front read this.
 */
export function countsWhenPrecomputed(path: string): boolean {
  return findOperation('GET', path)?.limited === true && !isImageOrChart(path);
}

function isImageOrChart(path: string): boolean {
  return path.startsWith('/api/image/brand/') || path.startsWith('/brand/') || path.endsWith('/chart/players');
}

/** SPEC 8: precomputed and cached brand images, and owners' private charts, do not count. */
function counts(event: H3Event): boolean {
  const from = event.context.answeredFrom;
  const image = !event.url.pathname.endsWith('/chart/players');
  return !(image && (from === 'precomputed' || from === 'cache')) && !event.context.ownerRequest;
}
