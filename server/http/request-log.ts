import type { IncomingMessage, ServerResponse } from 'node:http';
import type { H3Event } from 'h3';
import type { ServerRequest } from 'srvx';
import { connectionClient, type Client } from './client-address.ts';

/** One structured line per request. Built from the request line and our own context, never from headers, so never a token or key. */
export type RequestLog = {
  method: string;
  path: string;
  status: number;
  ms: number;
  /** static: a precomputed tree file; hit: the render cache; miss: rendered now. Absent when no cache applies. */
  cache?: 'static' | 'hit' | 'miss';
  client?: string;
  /** The client went away before the answer was complete. */
  aborted?: true;
};

const CACHE_NAMES: Record<string, RequestLog['cache']> = { precomputed: 'static', cache: 'hit', rendered: 'miss' };

/** What the routes learned of a request (h3's context), found again when its response is done. */
const CONTEXTS = new WeakMap<ServerResponse, Record<string, unknown>>();

/** h3's onRequest hook: remembers the request's context for the log. Synchronous, so the answer waits for nothing. */
export function rememberContext(event: H3Event): void {
  const res = (event.req as ServerRequest).runtime?.node?.res;
  if (res) CONTEXTS.set(res as ServerResponse, event.context);
}

/**
 * Logs each request once its response is finished or aborted, from Node's own events: off the
 * response's path, and without the promise h3's onResponse hook would add to every answer.
 */
export function logRequests(log: (entry: RequestLog) => void, trustProxy: (address: string) => boolean) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    res.once('close', () => {
      const context = CONTEXTS.get(res);
      const cache = CACHE_NAMES[context?.answeredFrom as string];
      const client = ((context?.client as Client | undefined) ?? connectionClient(req, trustProxy)).address;
      const query = req.url?.indexOf('?') ?? -1;
      log({
        method: req.method ?? 'GET',
        path: query === -1 ? (req.url ?? '/') : req.url!.slice(0, query),
        status: res.statusCode,
        ms: Math.round((performance.now() - started) * 100) / 100,
        ...(cache ? { cache } : {}),
        ...(client ? { client } : {}),
        ...(res.writableFinished ? {} : { aborted: true }),
      });
    });
  };
}
