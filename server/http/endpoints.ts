import { HTTPError, type H3Event } from 'h3';
import { addRoute, createRouter, findRoute } from 'rou3';
import { OPENAPI_DOCUMENT } from '../openapi.ts';
import { PRIVATE_HEADERS, PUBLIC_HEADERS } from './cache.ts';

/** What the edge needs to know of one operation, read off the OpenAPI document. */
export type Operation = {
  /** Counted by the rate limit: the operation documents a 429 (SPEC 8). */
  limited: boolean;
  /** Anyone may call it, so any web page may read its answers (CORS): it names no security. */
  public: boolean;
};

type Endpoint = { allow: string; operations: ReadonlyMap<string, Operation> };

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * Every documented path (`{id}` is one segment) with its operations, in a rou3 tree: it is looked up
 * on every request. The document is the one list of endpoints: methods (405, Allow), the rate limit
 * and CORS all read it.
 */
const ENDPOINTS = createRouter<Endpoint>();
for (const [template, item] of Object.entries(OPENAPI_DOCUMENT.paths ?? {})) {
  const operations = new Map<string, Operation>();
  for (const method of METHODS) {
    const operation = item[method];
    if (operation) operations.set(method.toUpperCase(), { limited: '429' in (operation.responses ?? {}), public: !operation.security });
  }
  const methods = [...operations.keys()].flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
  addRoute(ENDPOINTS, '', template.replace(/\{([^}]+)\}/g, ':$1'), { allow: [...methods, 'OPTIONS'].join(', '), operations });
}

export function findEndpoint(path: string): Endpoint | undefined {
  return findRoute(ENDPOINTS, '', path)?.data;
}

/** The operation a request calls (HEAD is GET without the body), or undefined. */
export function findOperation(method: string, path: string): Operation | undefined {
  return findEndpoint(path)?.operations.get(method === 'HEAD' ? 'GET' : method);
}

/** What no route answered: 405 with Allow for a documented path and another method, a JSON 404 otherwise. */
export function unroutedError(event: H3Event): HTTPError {
  const path = event.url.pathname;
  const endpoint = findEndpoint(path);
  if (!endpoint || findOperation(event.req.method, path)) return new HTTPError({ status: 404, message: `No endpoint at ${path}` });
  return new HTTPError({
    status: 405,
    message: `${event.req.method} is not allowed on ${path}; allowed: ${endpoint.allow}`,
    headers: { allow: endpoint.allow },
  });
}

/** OPTIONS, and the CORS preflight of public endpoints: which methods, and for any origin when public. */
export function answerOptions(event: H3Event): Response {
  const endpoint = findEndpoint(event.url.pathname);
  if (!endpoint) throw new HTTPError({ status: 404, message: `No endpoint at ${event.url.pathname}` });
  const cors = endpoint.operations.get('GET')?.public
    ? { ...PUBLIC_HEADERS, 'access-control-allow-methods': 'GET, HEAD', 'access-control-allow-headers': 'If-None-Match, If-Range, Range', 'access-control-max-age': '86400' }
    : PRIVATE_HEADERS;
  return new Response(null, { status: 204, headers: { allow: endpoint.allow, ...cors } });
}
