import type { H3Event } from 'h3';
import type { Client } from './client-address.ts';

/** Where an answer came from, for the request log: a tree file, the render cache, or rendered now. */
export type AnsweredFrom = 'precomputed' | 'cache' | 'rendered';

/** SPEC 8: this request's place in the rate limit (rate-limit.ts). */
export type RequestLimit = {
  /** The RateLimit fields of this request's charge; absent until it is charged, or while the store is down. */
  headers?: Record<string, string>;
  /** On routes that decide for themselves whether a request counts: charges it, once (chargeLimit). */
  charge?: () => Promise<void>;
};

// What the edge and the routes know of a request, declared once (h3's documented augmentation).
declare module 'h3' {
  interface H3EventContext {
    /** The client and its rate-limit key, worked out once per request (client-address.ts). */
    client?: Client;
    /** Read by the request log. */
    answeredFrom?: AnsweredFrom;
    rateLimit?: RequestLimit;
  }
}

/** The fields the edge adds to every answer of a request, success or error: the rate limit's. */
export function rateLimitFields(event: H3Event): Record<string, string> | undefined {
  return event.context.rateLimit?.headers;
}
