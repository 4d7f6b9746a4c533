import { HTTPError, type H3Event, type Middleware } from 'h3';
import { addRoute, createRouter, findRoute } from 'rou3';
import { PRIVATE_HEADERS, PUBLIC_HEADERS } from './cache.ts';

/** What the edge needs to know of one operation, read off the OpenAPI document. */
type Operation = {
  /** Counted by the rate limit: the operation documents a 429 (SPEC 8). */
  limited: boolean;
  /** Anyone may call it, so any web page may read its answers (CORS): it names no security. */
  public: boolean;
  /**
   * SPEC 8's exemption: its route charges the rate limit itself (chargeLimit), since precomputed
   * and cached images and owners' private charts do not count.
   */
  chargedByRoute: boolean;
};

type Endpoint = { template: string; allow: string; operations: ReadonlyMap<string, Operation> };

/** The part of an OpenAPI document's `paths` the edge reads. */
type DocumentedOperation = {
  responses?: object;
  security?: unknown;
  /**
   * Whose limit its 429 is: SPEC 8's per client address (the default), its route's own per server
   * key (ingestion), or SPEC 8's counting only the answers that fail (publishing: a refused token
   * counts, a publish does not).
   */
  'x-rate-limit'?: 'per-client' | 'per-server-key' | 'failures-only';
};
export type DocumentedPaths = Record<string, Partial<Record<(typeof METHODS)[number], DocumentedOperation>>>;

/** How many looked-up paths the endpoint table remembers. */
const KNOWN_PATHS = 10_000;
/**
 * Longer paths are looked up every time, never remembered: the longest documented path with its
 * parameters is under 100 characters, so the table holds at most KNOWN_PATHS times this.
 */
export const KNOWN_PATH_MAX_LENGTH = 256;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Every documented path with its operations; built once by the app and handed to the edge. */
export type EndpointTable = {
  findEndpoint(path: string): Endpoint | undefined;
  /**
   * The endpoint a path names with its parameters of the right shape (`accepts`): the one the 405
   * and OPTIONS answers speak of. `/api/plugin-versions/latest` fits `{id}` as a segment, not as an id.
   */
  findShapedEndpoint(path: string): Endpoint | undefined;
  /** The operation a request calls (HEAD is GET without the body), or undefined. */
  findOperation(method: string, path: string): Operation | undefined;
  /** What the lookup cache holds now: paths, and their characters in all. */
  cacheUse(): { paths: number; chars: number };
};

/**
 * Every documented path (`{id}` is one segment) with its operations, in a rou3 tree: it is looked up
 * on every request. The document is the one list of endpoints: methods (405, Allow), the rate limit
 * and CORS all read it. `chargedByRoute` names the documented paths whose routes charge the limit.
 */
export function createEndpointTable(
  paths: DocumentedPaths,
  chargedByRoute: readonly string[] = [],
  accepts: (template: string, path: string) => boolean = () => true,
): EndpointTable {
  const router = createRouter<Endpoint>();
  for (const [template, item] of Object.entries(paths)) {
    const operations = new Map<string, Operation>();
    for (const method of METHODS) {
      const operation = item[method];
      if (operation)
        operations.set(method.toUpperCase(), {
          limited: '429' in (operation.responses ?? {}) && operation['x-rate-limit'] !== 'per-server-key',
          public: !operation.security,
          chargedByRoute: chargedByRoute.includes(template) || operation['x-rate-limit'] === 'failures-only',
        });
    }
    const methods = [...operations.keys()].flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
    addRoute(router, '', template.replace(/\{([^}]+)\}/g, ':$1'), {
      template,
      allow: [...methods, 'OPTIONS'].join(', '),
      operations,
    });
  }
  // Every limited request looks its path up, and the same few thousand paths come again and again:
  // a Map hit costs a tenth of rou3's walk. Only documented paths of a bounded length are
  // remembered (anyone can send 404s of any length), and it is emptied when full.
  const known = new Map<string, Endpoint>();
  let knownChars = 0;
  const findEndpoint = (path: string) => {
    const remembered = known.get(path);
    if (remembered) return remembered;
    const endpoint = findRoute(router, '', path)?.data;
    if (endpoint && path.length <= KNOWN_PATH_MAX_LENGTH) {
      if (known.size >= KNOWN_PATHS) {
        known.clear();
        knownChars = 0;
      }
      known.set(path, endpoint);
      knownChars += path.length;
    }
    return endpoint;
  };
  return {
    findEndpoint,
    findShapedEndpoint(path) {
      const endpoint = findEndpoint(path);
      return endpoint && accepts(endpoint.template, path) ? endpoint : undefined;
    },
    findOperation: (method, path) => findEndpoint(path)?.operations.get(method === 'HEAD' ? 'GET' : method),
    cacheUse: () => ({ paths: known.size, chars: knownChars }),
  };
}

/** What a 404 of a path no endpoint serves says. */
export const noEndpointAt = (path: string) => `No endpoint at ${path}`;

/**
 * The app's last middleware, run once no earlier one answered: a request no route matched gets 405
 * with Allow for a documented path and another method, a JSON 404 otherwise. (Not a catch-all
 * route: h3 would match its `/**` for HEAD before falling back to a path's GET route.)
 */
export function answerUnrouted(endpoints: EndpointTable): Middleware {
  return (event, next) => {
    if (event.context.matchedRoute) return next();
    refuseUnrouted(endpoints, event);
  };
}

/**
 * The answer to a request no operation takes: 405 naming the allowed methods on a documented path,
 * else 404. Also for a route whose parameter has another shape (PATCH on `/api/plugin-versions/downloads`).
 */
export function refuseUnrouted(endpoints: EndpointTable, event: H3Event): never {
  const path = event.url.pathname;
  const endpoint = endpoints.findShapedEndpoint(path);
  if (!endpoint || endpoints.findOperation(event.req.method, path))
    throw new HTTPError({ status: 404, message: noEndpointAt(path) });
  throw new HTTPError({
    status: 405,
    message: `${event.req.method} is not allowed on ${path}; allowed: ${endpoint.allow}`,
    headers: { allow: endpoint.allow },
  });
}

/** OPTIONS, and the CORS preflight of public endpoints: which methods, and for any origin when public. */
export function answerOptions(endpoints: EndpointTable) {
  return (event: H3Event): Response => {
    const endpoint = endpoints.findShapedEndpoint(event.url.pathname);
    if (!endpoint) throw new HTTPError({ status: 404, message: noEndpointAt(event.url.pathname) });
    const cors = endpoint.operations.get('GET')?.public
      ? {
          ...PUBLIC_HEADERS,
          'access-control-allow-methods': 'GET, HEAD',
          'access-control-allow-headers': 'If-None-Match, If-Range, Range',
          'access-control-max-age': '86400',
        }
      : endpoint.operations.get('POST')?.public
        ? // Issue 31: a public lookup sent as JSON (the Modrinth-shaped one) may be called from any page.
          {
            ...PUBLIC_HEADERS,
            'access-control-allow-methods': 'POST',
            'access-control-allow-headers': 'Content-Type',
            'access-control-max-age': '86400',
          }
        : PRIVATE_HEADERS;
    return new Response(null, { status: 204, headers: { allow: endpoint.allow, ...cors } });
  };
}
