import type { H3Event } from 'h3';
import { requestClient } from './client-address.ts';

/** One structured line per request. Built from the request line and our own context, never from headers, so never a token or key. */
export type RequestLog = {
  method: string;
  path: string;
  status: number;
  ms: number;
  /** static: a precomputed tree file; hit: the render cache; miss: rendered now. Absent when no cache applies. */
  cache?: 'static' | 'hit' | 'miss';
  client?: string;
};

const CACHE_NAMES: Record<string, RequestLog['cache']> = { precomputed: 'static', cache: 'hit', rendered: 'miss' };

/** h3 hooks that time each request and hand its log entry to `log` once answered (errors too). */
export function requestLogHooks(log: (entry: RequestLog) => void, trustProxy: (address: string) => boolean) {
  return {
    onRequest: (event: H3Event) => {
      event.context.startedAt = performance.now();
    },
    onResponse: (response: Response, event: H3Event) => {
      const started = event.context.startedAt as number;
      const cache = CACHE_NAMES[event.context.answeredFrom as string];
      const client = requestClient(event, trustProxy);
      log({
        method: event.req.method,
        path: event.url.pathname,
        status: response.status,
        ms: Math.round((performance.now() - started) * 100) / 100,
        ...(cache ? { cache } : {}),
        ...(client ? { client } : {}),
      });
    },
  };
}
