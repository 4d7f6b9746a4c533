import type { IncomingMessage, ServerResponse } from 'node:http';
import type { H3EventContext } from 'h3';
import { guarded } from './after-response.ts';
import { connectionClient } from './client-address.ts';
import type { AnsweredFrom } from './event-context.ts';
import { hideSecrets } from '../helpers/hide-secrets.ts';

/** One structured line per request. Built from the request line (its path, secrets cut) and our own context, never from headers or the query, so never a token or key. */
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

/**
 * The path a log line shows: the request line's, without its query string (never logged) and
 * without any secret of ours pasted into it (a client that put its token where an id goes): its
 * kind stays, to say what it was, and the rest is cut, however it was spelled (hideSecrets).
 */
export function loggedPath(url: string | undefined): string {
  const query = url?.indexOf('?') ?? -1;
  const path = query === -1 ? (url ?? '/') : url!.slice(0, query);
  return hideSecrets(path);
}

const CACHE_NAMES: Record<AnsweredFrom, RequestLog['cache']> = {
  precomputed: 'static',
  cache: 'hit',
  rendered: 'miss',
};

/**
 * Logs a request once its response is finished or aborted, from Node's own event: off the
 * response's path, and without the promise h3's onResponse hook would add to every answer.
 * `context` is the request's h3 context: what the routes learned (cache use, the client).
 */
export function logRequests(log: (entry: RequestLog) => void, trustProxy: (address: string) => boolean) {
  return (req: IncomingMessage, res: ServerResponse, context: H3EventContext) => {
    const started = performance.now();
    // Node lets go of req.socket once the connection is gone (a 413 closes it before 'close' fires).
    const socket = req.socket;
    res.once(
      'close',
      guarded('request-log', () => {
        const cache = context.answeredFrom && CACHE_NAMES[context.answeredFrom];
        const client = (context.client ?? connectionClient(req, trustProxy, socket)).address;
        log({
          method: req.method ?? 'GET',
          path: loggedPath(req.url),
          status: res.statusCode,
          ms: Math.round((performance.now() - started) * 100) / 100,
          ...(cache ? { cache } : {}),
          ...(client ? { client } : {}),
          ...(res.writableFinished ? {} : { aborted: true }),
        });
      }),
    );
  };
}
