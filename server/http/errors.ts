import { loggedPath } from './request-log.ts';
import { HTTPError, type H3Event } from 'h3';
import type { ServerRequest } from 'srvx';
import { StorageUnavailableError } from '../storage.ts';
import { throttledLog } from '../helpers/throttled-log.ts';
import { isJsonObject } from '../data-files.ts';
import { PRIVATE_HEADERS, PUBLIC_HEADERS } from './cache.ts';
import type { EndpointTable } from './endpoints.ts';
import { rateLimitFields } from './event-context.ts';
import { hideSecrets } from '../helpers/hide-secrets.ts';

/**
 * The one error shape (SPEC 2.9): `{ "error": message, ...data }`. An error h3 did not get from us
 * (`unhandled`) is logged once and answered without detail, so internals never leak. CORS follows
 * the endpoint's operation, from the app's endpoint table.
 */
export function createErrorAnswer(endpoints: EndpointTable) {
  return (caught: HTTPError, event: H3Event): Response => answerError(caught, event, endpoints);
}

function answerError(caught: HTTPError, event: H3Event, endpoints: EndpointTable): Response {
  const error = caught.cause instanceof StorageUnavailableError ? storageUnavailable(caught.cause) : caught;
  let status = error.status;
  let body: Record<string, unknown>;
  if (error.unhandled && isClientAbort(error.cause, event)) {
    // Not our fault and nothing to debug: one line, no stack; the answer reaches nobody.
    logClientAbort(
      `[request] ${event.req.method} ${loggedPath(event.url.pathname)}: the client went away before its request was complete (said at most once a minute)`,
    );
    status = 400;
    body = { error: 'The request ended before its body was complete' };
  } else if (error.unhandled) {
    console.error(`[error] ${event.req.method} ${loggedPath(event.url.pathname)}:`, error.cause ?? error);
    status = 500;
    body = { error: 'Internal server error' };
  } else {
    // An error may echo what the request said (a path, an id): never a secret pasted into it.
    body = { error: hideSecrets(error.message), ...(isJsonObject(error.data) ? error.data : {}) };
  }
  const headers = new Headers(rateLimitFields(event));
  if (!error.unhandled) error.headers?.forEach((value, name) => headers.set(name, value));
  const cors = endpoints.findOperation(event.req.method, event.url.pathname)?.public ? PUBLIC_HEADERS : PRIVATE_HEADERS;
  for (const [name, value] of Object.entries(cors)) headers.set(name, value);
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  headers.set('content-type', 'application/json; charset=utf-8');
  headers.set('content-length', String(bytes.length));
  return new Response(bytes, { status, headers });
}

const logClientAbort = throttledLog((line) => console.error(line));

/**
 * Reading the body failed because the client closed the connection midway: Node's 'aborted'
 * (ECONNRESET), even when the last chunk had arrived, or a request cut off before its end.
 */
function isClientAbort(cause: unknown, event: H3Event): boolean {
  const req = (event.req as ServerRequest).runtime?.node?.req;
  if (!req) return false;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return code === 'ECONNRESET' || code === 'ABORT_ERR' || (req.destroyed && !req.complete);
}

const logStorageOutage = throttledLog((line) => console.error(line));

/** Redis is down: a prompt 503 the client can retry, not a 500 or a hanging request. The cause is logged once a minute. */
function storageUnavailable(cause: StorageUnavailableError): HTTPError {
  logStorageOutage(`[storage] answering 503: ${cause.message}`);
  return new HTTPError({
    status: 503,
    message: 'Shared storage is unavailable; retry in a few seconds',
    headers: { 'retry-after': '5' },
  });
}

export function notFound(message: string, data?: Record<string, unknown>, headers?: Record<string, string>): HTTPError {
  return new HTTPError({ status: 404, message, data, headers });
}
