import { NGINX_LOG_FORMAT } from '../server/downloads/access-log.ts';
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_PUBLISH_MAX_BYTES, type DeployOptions } from '../server/config.ts';
import type { RateLimitPolicy } from '../server/http/rate-limit-policy.ts';
import { CACHE_CONTROL } from '../server/http/cache.ts';
import { FILES_DIR, NOT_FOUND_PAGE, type RouteEntry } from '../server/tree/format.ts';
import { OTHER_ENDPOINT_PATHS } from '../server/pages.ts';
import { ENDPOINT_PREFIXES } from '../server/page-paths.ts';
import { DOLLAR_VARIABLE, headerName, pathValue, quote, quoteValue } from './nginx-quote.ts';
import {
  ETAGS_FILE,
  EXACT_FILE,
  ROUTES_FILE,
  headerFile,
  headerVariable,
  routeTable,
  type RouteClass,
} from './nginx-routes.ts';
import { staticHostConfigs } from './static-host-configs.ts';

/** What a multipart upload carries beside its JAR (boundaries, part headers, metadata): nginx's limit is PUBLISH_MAX_BYTES plus this. */
const MULTIPART_OVERHEAD_BYTES = 2 ** 20;

/** A publish answers once the new version is served, after its build and AFTER_SWAP: nginx waits this long for it. */
const PUBLISH_READ_TIMEOUT = '300s';

/** Cloudflare Pages' cap on `_redirects` (docs/deployment.md: its 100 `_headers` rules are far fewer than our paths). */
const CLOUDFLARE_PAGES_REDIRECTS = 2000;

/**
 * Writes the deployment configs beside the manifest they come from: `nginx.conf` (include it in
 * nginx's http block), `_headers` and `_redirects` (static hosts of the Netlify and Cloudflare Pages
 * kind). Returns a line for the build's progress output.
 */
export async function writeDeployConfigs(
  treeDir: string,
  treeName: string,
  routes: Record<string, RouteEntry>,
  deploy: DeployOptions & { distDir: string },
  rateLimit: RateLimitPolicy | null,
): Promise<string> {
  const deployedTree = `${deploy.distDir}/trees/${treeName}`;
  const nginx = nginxFiles(routes, { ...deploy, treeDir: deployedTree, rateLimit });
  await writeFile(join(treeDir, 'nginx.conf'), nginx.conf);
  for (const [name, text] of Object.entries(nginx.included)) await writeFile(join(treeDir, name), text);
  const staticHost = staticHostConfigs(routes, deploy.originUrl);
  await writeFile(join(treeDir, '_headers'), staticHost.headers);
  await writeFile(join(treeDir, '_redirects'), staticHost.redirects);
  // Static hosts answer a path they have no file or rule for with the root's 404.html, status 404.
  const notFound = routes[NOT_FOUND_PAGE];
  if (notFound) await copyFile(join(treeDir, notFound.file), join(treeDir, '404.html'));
  const over =
    staticHost.rules > CLOUDFLARE_PAGES_REDIRECTS ? `; more than Cloudflare Pages' ${CLOUDFLARE_PAGES_REDIRECTS}` : '';
  return `nginx.conf, _headers and _redirects (${staticHost.rules} paths${over})`;
}

type NginxOptions = Omit<DeployOptions, 'distDir'> & { treeDir: string; rateLimit: RateLimitPolicy | null };

/** nginx.conf and the files it includes (names relative to the tree, written beside it). */
export type NginxFiles = { conf: string; included: Record<string, string> };

/** nginx.conf alone (nginxFiles): its included maps are the tree's, written by the build. */
export function nginxConfig(routes: Record<string, RouteEntry>, options: NginxOptions): string {
  return nginxFiles(routes, options).conf;
}

/**
 * nginx serves each manifest answer from its file with the origin's headers, and forwards the rest
 * (other letter cases, other queries, methods other than GET and HEAD, charts, ingestion) to the
 * origins. A request is matched on method, path and query string (as sent) in one hashed map, read
 * from an included file, whose value names the answer's header class and file: one location per
 * class (a few dozen whatever the version count), the headers that differ per route from more maps
 * (routeTable). Where nginx cannot answer exactly as the origin would, it forwards: an
 * Accept-Encoding with q-values or a wildcard, a Range outside the file. Publishing (POST and PATCH
 * on /api/plugin-versions) goes to the publish origin alone, the one that holds data/ (issue 30).
 */
export function nginxFiles(routes: Record<string, RouteEntry>, options: NginxOptions): NginxFiles {
  const limit = options.rateLimit;
  // With the site: page paths no route has are redirected or answered with its 404 page, as the origin does.
  const notFound = routes[NOT_FOUND_PAGE];
  // Answers other than 200 (a few small 404s) are left to the origin, which has them in memory.
  const table = routeTable(routes);
  const included = (name: string) => `${options.treeDir}/${name}`;
  // The first request plus a burst of limit - 1 pass at once.
  const burst = limit ? limit.limit - 1 : null;
  const locations = table.classes.map((shape, index) => classLocation(index, shape, options.treeDir, burst)).join('\n');
  // nginx counts per second or minute: SPEC 8's 100 per 15 minutes becomes a burst of 100 refilled
  // at 7 a minute (a leaky bucket, where the origin counts a fixed window).
  const perMinute = limit ? Math.max(1, Math.round((limit.limit * 60) / limit.windowSeconds)) : 0;
  const answers = table.files[ROUTES_FILE]!.split('\n').length - 1;
  const conf = `# plugin depot: generated by \`npm run build\` from this tree's manifest.json. Rebuild; do not edit.
# Include it inside nginx's http { } block (docs/deployment.md). ${answers} answers come from files
# of ${options.treeDir} (${table.classes.length} header classes); everything else goes to the origins.

${upstreamBlock(options.origins)}
${publishUpstreamBlock(options.publishOrigin ?? options.origins[0]!)}
# The downloads nginx serves from files are counted from its log: \`access_log <file> depot;\` in
# your http { } block, then \`npm run depot -- counts import <file>\` (docs/api.md: Download counts).
log_format depot '${NGINX_LOG_FORMAT}';
${DOLLAR_VARIABLE}
map_hash_max_size ${mapHashSize(answers)};
map_hash_bucket_size 512;
${limit ? clientLimitZone(perMinute) : ''}
${CODING_MAPS}
${PUBLISHING_MAP}
${routeMaps(included, table.routeHeaders)}
${notFound ? pageMap() : ''}
${serverBlock(options, limit, perMinute ? Math.ceil(60 / perMinute) : 0, locations, notFound)}
`;
  return { conf, included: table.files };
}

/**
 * Room for the route map's keys: three to six buckets a key (5 keys fit a 512-byte bucket), so that
 * nginx finds a size where none overflows (it tries sizes up to this one, then warns).
 */
const mapHashSize = (keys: number) => Math.max(65_536, 2 ** Math.ceil(Math.log2(Math.max(keys, 1) * 3)));

function upstreamBlock(origins: readonly string[]): string {
  return `upstream depot_origins {
${origins.map((origin) => `  server ${origin} max_fails=1 fail_timeout=10s;`).join('\n')}
  keepalive 32;
}`;
}

/** Publishing builds and swaps trees on the machine that holds data/: one origin, never retried elsewhere. */
function publishUpstreamBlock(origin: string): string {
  return `upstream depot_publish {
  server ${origin};
  keepalive 8;
}`;
}

/** Which requests publish (the rest of /api/plugin-versions reads as every other path does). */
const PUBLISHING_MAP = `map $request_method $depot_publishing {
  POST 1;
  PATCH 1;
  default "";
}`;

/**
 * /api/plugin-versions and /api/plugin-versions/<id>: reads go where `location /` sends them,
 * publishing to the publish origin with the upload's body limit (checked here against
 * Content-Length, before a byte is read), streamed through as it arrives: the origin hashes the
 * upload on its way to disk, and nginx spooling 64 MiB first would only delay it.
 */
function publishLocations(maxBytes: number): string {
  const bodyLimit = maxBytes + MULTIPART_OVERHEAD_BYTES;
  const tooLarge = JSON.stringify({
    error: `The upload is larger than PUBLISH_MAX_BYTES allows (${maxBytes} bytes)`,
  });
  return `  location ~* ^/api/plugin-versions(?:/[^/]+)?/?$ {
    client_max_body_size ${bodyLimit};
    error_page 413 = @too_large;
    error_page 419 = @publish;
    if ($depot_route) {
      rewrite ^ /_depot/$depot_route? last;
    }
    if ($depot_publishing) {
      return 419;
    }
    proxy_pass http://depot_origins;
  }
  location @publish {
    client_max_body_size ${bodyLimit};
    error_page 413 = @too_large;
    proxy_request_buffering off;
    proxy_read_timeout ${PUBLISH_READ_TIMEOUT};
    proxy_send_timeout ${PUBLISH_READ_TIMEOUT};
    proxy_pass http://depot_publish$request_uri;
  }
  location @too_large {
    default_type "application/json; charset=utf-8";
    add_header access-control-allow-origin * always;
    add_header x-content-type-options nosniff always;
    return 413 ${quoteValue(tooLarge)};
  }
`;
}

/** The rate limit zone, keyed by client as the origin keys it. */
function clientLimitZone(perMinute: number): string {
  return `# Clients as the origin counts them: an IPv6 address by its /64 (its first 8 bytes), unless IPv4-mapped.
map $binary_remote_addr $depot_client {
  "~(?s)^(?!\\0{8})(?<depot_v6_prefix>.{8}).{8}$" $depot_v6_prefix;
  default $binary_remote_addr;
}
limit_req_zone $depot_client zone=depot_limit:10m rate=${perMinute}r/m;
`;
}

/** Which requests may be read from files, and the br/gzip file to read. */
const CODING_MAPS = `map $request_method $depot_readable {
  GET 1;
  HEAD 1;
  default "";
}
# br and gzip as the origin chooses them; q-values and wildcards go to the origin, which weighs them.
map $http_accept_encoding $depot_coding {
  default "";
  "~[;*]" origin;
  "~*(^|[ ,])br([ ,]|$)" br;
  "~*(^|[ ,])gzip([ ,]|$)" gzip;
}
map $depot_coding $depot_coding_file {
  br .br;
  gzip .gz;
  default "";
}
map $depot_coding $depot_coding_name {
  br br;
  gzip gzip;
  default "";
}
map $depot_coding $depot_coding_tag {
  br -br;
  gzip -gzip;
  default "";
}`;

/**
 * The route map (method and request URI -> `<class>/<sha256>.<ext>`) and the maps classLocation
 * reads, their entries in the tree's included files. nginx compares map keys regardless of letter
 * case: `$depot_exact` is the route's exact URI where it has capitals, else the request's URI when
 * it has none, and each location checks the request against it.
 */
function routeMaps(included: (name: string) => string, routeHeaders: string[]): string {
  const byRequest = (variable: string, file: string, fallback = '""') => `map $request_uri ${variable} {
  default ${fallback};
  include ${pathValue(included(file))};
}`;
  return `map "$depot_readable$request_uri" $depot_route {
  default "";
  include ${pathValue(included(ROUTES_FILE))};
}
map $request_uri $depot_uncapitalised {
  "~[A-Z]" "";
  default $request_uri;
}
${byRequest('$depot_exact', EXACT_FILE, '$depot_uncapitalised')}
${byRequest('$depot_route_tag', ETAGS_FILE)}
# If-None-Match holds the tag (as a substring, as the origin's check reads it) or is *.
map "$depot_sha $http_if_none_match" $depot_file_unchanged {
  "~^(\\S+) (\\*$|.*\\1)" 1;
  default "";
}
map "$depot_route_tag $http_if_none_match" $depot_route_unchanged {
  "~^(\\S+) (\\*$|.*\\1)" 1;
  default "";
}
${routeHeaders.map((name) => byRequest(headerVariable(name), headerFile(name))).join('\n')}`;
}

function serverBlock(
  options: NginxOptions,
  limit: RateLimitPolicy | null,
  retryAfter: number,
  locations: string,
  notFound: RouteEntry | undefined,
): string {
  return `server {
  listen ${options.listen};
  server_tokens off;
  charset off;
  types { }
  default_type application/octet-stream;
  etag off;
  if_modified_since off;
  max_ranges 1;
  client_max_body_size 1m;
${options.realIpFrom.map((from) => `  set_real_ip_from ${from};`).join('\n')}${options.realIpFrom.length ? '\n  real_ip_header X-Forwarded-For;\n  real_ip_recursive on;\n' : ''}
  error_page 418 = @origin;
  error_page 416 = @origin;
${limit ? `  limit_req_status 429;\n  error_page 429 = @limited;\n` : ''}
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_set_header Host $http_host;
  proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
  proxy_set_header X-Forwarded-Proto $scheme;
  proxy_next_upstream error timeout;
  proxy_connect_timeout 2s;

  location / {
    if ($depot_route) {
      rewrite ^ /_depot/$depot_route? last;
    }
${notFound ? pageActions() : ''}    proxy_pass http://depot_origins;
  }
${publishLocations(options.publishMaxBytes ?? DEFAULT_PUBLISH_MAX_BYTES)}${notFound ? notFoundLocation(notFound, options.treeDir) : ''}  location @origin {
    # A 416 arrives here with nginx's own Content-Range already set.
    proxy_hide_header Content-Range;
    proxy_pass http://depot_origins$request_uri;
  }
${limit ? limitedLocation(limit, retryAfter) : ''}
  location ^~ /_depot/ {
    internal;
${locations}
  }
}`;
}

/**
 * What nginx does itself for a page path (server/pages.ts: not under ENDPOINT_PREFIXES, not another
 * endpoint) that no route has, read with GET or HEAD: a trailing slash redirects (a path of plain
 * characters only: `$uri` is decoded); one under /versions/ (aliases, /versions/<software>) or with a
 * query string (a page by its path alone) goes to the origin; any other is the site's 404 page.
 */
function pageMap(): string {
  return `# Page paths no route above has (docs/deployment.md): redirect, origin ("") or the 404 page.
map "$depot_readable$is_args$uri" $depot_page {
  default "";
  ${quote(`~^1\\??(${ENDPOINT_PREFIXES.join('|')})`)} "";
${OTHER_ENDPOINT_PATHS.flatMap((path) => {
  if (path.includes('{')) throw new Error(`nginx.conf: no page rule for the templated endpoint ${path}`);
  return [`  ${quote(`1${path}`)} "";`, `  ${quote(`1?${path}`)} "";`];
}).join('\n')}
  "~^1\\??(?<depot_page_path>/[-\\w.~/]*[-\\w.~])/+$" slash;
  "~^1/versions(/|$)" "";
  "~^1/" missing;
}
`;
}

function pageActions(): string {
  return `    absolute_redirect off;
    if ($depot_page = slash) {
      add_header cache-control ${quoteValue(CACHE_CONTROL.sitePage)};
      return 301 $depot_page_path$is_args$args;
    }
    if ($depot_page = missing) {
      return 404;
    }
    error_page 404 /_depot/not-found;
`;
}

/** The site's 404 page with status 404 and the page's headers, but no ETag: a 404 is never a 304. */
function notFoundLocation(page: RouteEntry, treeDir: string): string {
  const headers = Object.entries(page.headers).filter(([name]) => !['etag', 'content-type', 'vary'].includes(name));
  return `  location = /_depot/not-found {
    internal;
    default_type ${quote(page.headers['content-type'] ?? 'text/html')};
${headers.map(([name, value]) => `    add_header ${headerName(name)} ${quoteValue(value)} always;`).join('\n')}
    max_ranges 0;
    alias ${pathValue(`${treeDir}/${page.file}`)};
  }
`;
}

/** SPEC 8's 429, as the origin words it. */
function limitedLocation(limit: RateLimitPolicy, retryAfter: number): string {
  return `  location @limited {
    default_type "application/json; charset=utf-8";
    add_header retry-after ${retryAfter} always;
    add_header access-control-allow-origin * always;
    add_header x-content-type-options nosniff always;
    return 429 ${quoteValue(JSON.stringify({ error: `Rate limit of ${limit.limit} requests per ${limit.windowSeconds} seconds exceeded; retry in ${retryAfter} seconds` }))};
  }
`;
}

/** One header class's location: the file and ETag from the rewritten URI, the route headers from their maps. */
function classLocation(index: number, shape: RouteClass, treeDir: string, burst: number | null): string {
  const tag = shape.etag === 'file' ? '$depot_sha' : '$depot_route_tag';
  const lines = [
    `    location ~ ${quote(`^/_depot/${index}/(?<depot_sha>[0-9a-f]{64})\\.(?<depot_ext>[a-z0-9]+)$`)} {`,
    '      internal;',
    `      default_type ${quote(shape.contentType)};`,
  ];
  if (burst !== null && shape.counts) lines.push(`      limit_req zone=depot_limit burst=${burst} nodelay;`);
  lines.push('      if ($request_uri != $depot_exact) {', '        return 418;', '      }');
  if (shape.coded) lines.push('      if ($depot_coding = origin) {', '        return 418;', '      }');
  if (shape.etag !== 'none')
    lines.push(`      if ($depot_${shape.etag}_unchanged) {`, '        return 304;', '      }');
  // nginx sends Accept-Ranges itself where ranges are on.
  for (const [name, value] of shape.headers)
    lines.push(`      add_header ${headerName(name)} ${quoteValue(value)} always;`);
  for (const name of shape.routeHeaders) lines.push(`      add_header ${name} ${headerVariable(name)} always;`);
  if (shape.etag !== 'none')
    lines.push(`      add_header etag ${shape.coded ? `"\\"${tag}$depot_coding_tag\\""` : `"\\"${tag}\\""`} always;`);
  if (shape.coded) lines.push('      add_header content-encoding $depot_coding_name always;');
  if (!shape.ranges) lines.push('      max_ranges 0;');
  const file = pathValue(`${treeDir}/${FILES_DIR}/`, `$depot_sha.$depot_ext${shape.coded ? '$depot_coding_file' : ''}`);
  lines.push(`      alias ${file};`, '    }');
  return lines.join('\n');
}

/**
 * A minimal main nginx.conf around the generated one, with every path under `dir`: how the tests
 * and benchmarks run nginx, and a starting point for a machine that runs nginx for the depot alone.
 */
export function standaloneNginxConfig(dir: string, include: string, workers = 2, accessLog?: string): string {
  // Temp folders are private to their owner: when that is root (CI), workers run as root to read them.
  const user = process.getuid?.() === 0 ? 'user root;\n' : '';
  return `${user}worker_processes ${workers};
pid ${dir}/nginx.pid;
error_log ${dir}/error.log notice;
events { worker_connections 1024; }
http {
  sendfile on;
  keepalive_requests 100000;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  include ${include};
  access_log ${accessLog ? `${accessLog} depot` : 'off'};
}
`;
}
