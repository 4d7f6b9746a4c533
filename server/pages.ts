import type { Middleware } from 'h3';
import { FastResponse } from 'srvx';
import { ENDPOINTS } from './endpoints.ts';
import { OPENAPI_PATHS } from './openapi.ts';
import { CACHE_CONTROL } from './http/cache.ts';
import { sendTreeEntry, type TreeSource } from './tree/serve.ts';
import { NOT_FOUND_PAGE } from './tree/format.ts';
import { SERVER_SOFTWARE, SOFTWARE, findSoftware, type ServerSoftware } from './versions/software.ts';
import { HISTORY_ALL as ALL, historyArchivePath, historyPagePath, isUnderEndpointPrefix } from './page-paths.ts';

/** Names people type for a server software on the pages (/versions/paper/21): pages only, the API keeps SPEC 2.3's names. */
const SOFTWARE_ALIASES: Readonly<Record<string, ServerSoftware>> = Object.fromEntries(
  SERVER_SOFTWARE.flatMap((software) => SOFTWARE[software].pageAliases.map((alias) => [alias, software])),
);

/** The documented endpoints outside the endpoint prefixes (page-paths.ts; /healthz): for configs that list them one by one. */
export const OTHER_ENDPOINT_PATHS = Object.keys(OPENAPI_PATHS).filter((path) => !isUnderEndpointPrefix(path));

/**
 * A path of the human site: everything but the API, the brand images and the other documented
 * endpoints. Its errors are HTML pages; the API's stay JSON (SPEC 7).
 */
function isPagePath(path: string): boolean {
  return !isUnderEndpointPrefix(path) && !ENDPOINTS.findEndpoint(path);
}

/**
 * The one address of a page path, or undefined when it is that already: no trailing slash, one
 * leading slash (never `//host`, which a browser would read as another site), and under /versions/
 * the software by its lowercase name (aliases too); /versions/<software> lists every Java version,
 * which is /versions/<software>/all, and every software on every Java version is /versions.
 */
export function canonicalPagePath(path: string): string | undefined {
  let canonical = `/${path.replace(/^\/+|\/+$/g, '')}`;
  const [, section, name, ...java] = canonical.split('/');
  const software = name === undefined ? undefined : historySoftware(name);
  if (section === 'versions' && software) {
    // An older page of the history (historyArchivePath) keeps its number after the filter's address.
    const page =
      java.length >= 2 && java.at(-2) === 'page' && /^[1-9]\d*$/.test(java.at(-1)!) ? java.splice(-2)[1] : '';
    const rest = java.length ? java.join('/') : ALL;
    const history = historyPagePath(software === ALL ? undefined : software, rest === ALL ? undefined : rest);
    canonical = page ? historyArchivePath(history, Number(page)) : history;
  }
  return canonical === path ? undefined : canonical;
}

/** A /versions/ segment as the pages name it: a software's lowercase name, or `all`. */
function historySoftware(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (lower === ALL) return ALL;
  // hasOwn: /versions/constructor is no alias (the table is an object, with a prototype).
  const software = Object.hasOwn(SOFTWARE_ALIASES, lower) ? SOFTWARE_ALIASES[lower] : findSoftware(lower);
  return software?.toLowerCase();
}

/** The /versions/<segment> that canonicalPagePath redirects (static hosts list them): aliases, software names, `all`. */
export const HISTORY_SEGMENTS = [
  ...Object.keys(SOFTWARE_ALIASES),
  ...SERVER_SOFTWARE.map((software) => software.toLowerCase()),
  ALL,
];

/**
 * The site's side of the origin, after the static tree and before the API's JSON 404: a page path
 * (GET or HEAD, no route) is redirected to its one address (301, query kept), answered from its file
 * when it came with a query string the manifest does not list, or else answered with the site's
 * 404 page. A tree without the site (SITE=off) keeps the JSON 404.
 */
export function servePages(source: TreeSource): Middleware {
  return (event, next) => {
    const { method } = event.req;
    if ((method !== 'GET' && method !== 'HEAD') || event.context.matchedRoute) return next();
    const { pathname, search } = event.url;
    const tree = source.tree();
    const notFound = tree.routes.get(NOT_FOUND_PAGE);
    if (!notFound || !isPagePath(pathname)) return next();
    const canonical = canonicalPagePath(pathname);
    if (canonical !== undefined) return redirect(canonical + search);
    const page = search === '' ? undefined : tree.routes.get(pathname);
    if (page) return sendTreeEntry(source.files, tree, event, page);
    // The page's own status (404) and headers (type, CSP, cache), but no ETag, 304 or coding: any path answers it.
    const { etag: _etag, vary: _vary, ...headers } = notFound.headers;
    const { encodings: _encodings, ...file } = notFound;
    return sendTreeEntry(source.files, tree, event, { ...file, headers });
  };
}

function redirect(location: string): Response {
  return new FastResponse(null, {
    status: 301,
    headers: { location, 'cache-control': CACHE_CONTROL.sitePage, 'content-length': '0' },
  });
}
