import { countsWhenPrecomputed } from '../server/endpoints.ts';
import type { RouteEntry } from '../server/tree/format.ts';
import { quote, quoteValue } from './nginx-quote.ts';

/**
 * Headers whose values differ from route to route (a JAR's name and digests, a latest download's
 * Content-Location, a withdrawn version's Link and Deprecation): nginx reads them from maps keyed by
 * the request, so the locations stay one per header class. Any other header with more than
 * CLASS_VALUES_MAX values joins them, so the classes stay few whatever the manifest holds.
 */
const ROUTE_HEADERS = ['content-disposition', 'content-location', 'repr-digest', 'digest', 'link', 'deprecation'];
const CLASS_VALUES_MAX = 64;

/** How a class's answers get their ETag: from the file's name (our strong ETag), from a map, or none. */
type EtagSource = 'file' | 'route' | 'none';

/** Answers nginx serves with one location: the same headers once ETag and ROUTE_HEADERS are taken out. */
export type RouteClass = {
  contentType: string;
  /** `<file>.br` and `<file>.gz` beside the file. */
  coded: boolean;
  ranges: boolean;
  /** The rate limit counts it (countsWhenPrecomputed). */
  counts: boolean;
  etag: EtagSource;
  /** The class's own headers, but Content-Type, ETag and Accept-Ranges (nginx sends that itself). */
  headers: [string, string][];
  /** The ROUTE_HEADERS some of its answers have, each from its map. */
  routeHeaders: string[];
};

/** The classes, and the included files nginx looks routes up in (file name -> text). */
export type RouteTable = { classes: RouteClass[]; routeHeaders: string[]; files: Record<string, string> };

/** The included file of route -> `<class>/<sha256>.<ext>`, keyed by `$depot_readable$request_uri`. */
export const ROUTES_FILE = 'nginx-routes.map';
/** Routes whose path has capitals (nginx's maps ignore case): request URI -> the exact one. */
export const EXACT_FILE = 'nginx-exact.map';
/** Routes whose ETag is not their file's sha256 (resized images): request URI -> the tag. */
export const ETAGS_FILE = 'nginx-etags.map';
export const headerFile = (name: string) => `nginx-header-${name}.map`;
export const headerVariable = (name: string) => `$depot_header_${name.replaceAll('-', '_')}`;

const FILE = /^files\/([0-9a-f]{64})\.([a-z0-9]+)$/;

/** Groups the manifest's 200 answers into header classes and writes the maps that name each route's. */
export function routeTable(routes: Record<string, RouteEntry>): RouteTable {
  const perRoute = routeHeaderNames(routes);
  const perRouteSet = new Set(perRoute);
  const classes: RouteClass[] = [];
  const classIndex = new Map<string, number>();
  const lines = { routes: joinedLines(), exact: joinedLines(), etags: joinedLines() };
  const headerLines = new Map(perRoute.map((name) => [name, joinedLines()]));
  // Paths that differ only in their query share an endpoint: one lookup per path.
  const counted = new Map<string, boolean>();
  for (const path in routes) {
    const entry = routes[path]!;
    if (entry.status !== 200) continue;
    const [, sha256, extension] = FILE.exec(entry.file) ?? [];
    if (!sha256) throw new Error(`nginx.conf: ${entry.file} is not a tree file`);
    const query = path.indexOf('?');
    const pathname = query < 0 ? path : path.slice(0, query);
    let counts = counted.get(pathname);
    if (counts === undefined) counted.set(pathname, (counts = countsWhenPrecomputed(pathname)));
    // Most answers share a class: its shape is made only for a key not seen yet.
    const key = classKey(entry, sha256, counts, perRouteSet);
    let index = classIndex.get(key);
    if (index === undefined)
      classIndex.set(key, (index = classes.push(routeClass(entry, sha256, counts, perRoute)) - 1));
    const shape = classes[index]!;
    lines.routes.push(`${quote(`1${path}`)} ${index}/${sha256}.${extension};`);
    if (/[A-Z]/.test(path)) lines.exact.push(`${quote(path)} ${quoteValue(path)};`);
    if (shape.etag === 'route') lines.etags.push(`${quote(path)} ${quoteValue(unquoted(entry.headers.etag!))};`);
    for (const name of shape.routeHeaders)
      headerLines.get(name)!.push(`${quote(path)} ${quoteValue(entry.headers[name]!)};`);
  }
  const files: Record<string, string> = {
    [ROUTES_FILE]: lines.routes.text(),
    [EXACT_FILE]: lines.exact.text(),
    [ETAGS_FILE]: lines.etags.text(),
  };
  for (const [name, text] of headerLines) files[headerFile(name)] = text.text();
  return { classes, routeHeaders: perRoute, files };
}

/**
 * What routeClass's shape is made of, as one string, without sorting or copying the headers: a
 * tenth of the time at 64,000 routes. Headers are listed in the entry's order, so two entries
 * whose headers come in another order make two equal classes, never a wrong one.
 */
function classKey(entry: RouteEntry, sha256: string, counts: boolean, perRoute: ReadonlySet<string>): string {
  const { headers } = entry;
  const etag = headers.etag === undefined ? 'none' : headers.etag === `"${sha256}"` ? 'file' : 'route';
  let key = `${entry.encodings !== undefined}\0${counts}\0${etag}`;
  for (const name in headers)
    if (name !== 'etag') key += perRoute.has(name) ? `\0${name}` : `\0${name}\0${headers[name]}`;
  return key;
}

/** An answer's class: the same for answers that differ only in ETag and ROUTE_HEADERS' values. */
function routeClass(entry: RouteEntry, sha256: string, counts: boolean, perRoute: string[]): RouteClass {
  const { etag, 'content-type': contentType, 'accept-ranges': ranges, ...rest } = entry.headers;
  const headers: [string, string][] = [];
  const routeHeaders: string[] = [];
  for (const name of Object.keys(rest).sort())
    if (perRoute.includes(name)) routeHeaders.push(name);
    else headers.push([name, rest[name]!]);
  return {
    contentType: contentType ?? 'application/octet-stream',
    coded: entry.encodings !== undefined,
    ranges: ranges !== undefined,
    counts,
    etag: etag === undefined ? 'none' : etag === `"${sha256}"` ? 'file' : 'route',
    headers,
    routeHeaders,
  };
}

/** ROUTE_HEADERS, then any other header with more than CLASS_VALUES_MAX values among the answers. */
function routeHeaderNames(routes: Record<string, RouteEntry>): string[] {
  const values = new Map<string, Set<string>>();
  const many = new Set<string>();
  for (const path in routes) {
    const entry = routes[path]!;
    if (entry.status !== 200) continue;
    for (const name in entry.headers) {
      if (name === 'etag' || ROUTE_HEADERS.includes(name) || many.has(name)) continue;
      let seen = values.get(name);
      if (!seen) values.set(name, (seen = new Set()));
      seen.add(entry.headers[name]!);
      if (seen.size > CLASS_VALUES_MAX) many.add(name);
    }
  }
  const names = [...ROUTE_HEADERS, ...[...many].sort()];
  for (const name of names)
    if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`nginx.conf: no route map for the header ${JSON.stringify(name)}`);
  return names;
}

const unquoted = (etag: string) => etag.replace(/^"|"$/g, '');

/**
 * Lines of one `\n`-joined text, joined a few thousand at a time: a hundred thousand small strings
 * kept alive until a single join are what the garbage collector spends most of a large map's time on
 * (copied from young to old space), where each joined chunk is one large string.
 */
function joinedLines() {
  const chunks: string[] = [];
  const lines: string[] = [];
  return {
    push(line: string) {
      lines.push(line);
      if (lines.length < 16_384) return;
      chunks.push(lines.join('\n'));
      lines.length = 0;
    },
    text: () => [...chunks, lines.join('\n')].join('\n') + '\n',
  };
}
