import { basename } from 'node:path';
import { H3, type Middleware } from 'h3';
import type { AppContext } from './context.ts';
import { CACHE_CONTROL, PRIVATE_HEADERS } from './http/cache.ts';
import { ENDPOINTS } from './endpoints.ts';
import { answerOptions, answerUnrouted } from './http/endpoints.ts';
import { createErrorAnswer } from './http/errors.ts';
import { sendJson } from './http/json.ts';
import { limitRequests, type RateLimiter } from './http/rate-limit.ts';
import { jarFile } from './tree/format.ts';
import { serveTree } from './tree/serve.ts';
import { servePages } from './pages.ts';
import { FEED_PAGES } from './page-paths.ts';
import { openApiDocument } from './openapi.ts';
import { OPERATION_RULES } from './url-grammar.ts';
import { versionRoutes } from './versions/routes.ts';
import { VERSIONS_ROOT } from './versions/paths.ts';
import { brandRoutes } from './brands/routes.ts';
import { chartRoutes } from './charts/routes.ts';
import { downloadRoutes } from './downloads/routes.ts';
import { badgeRoutes } from './badges/routes.ts';
import { publishRoutes } from './publish/routes.ts';
import { projectRoutes } from './project/routes.ts';

/**
 * Every response of the service. The build calls this app in-process to pre-render the finite
 * answers; the origin is the same app with the edge (rate limit, static tree) in front.
 */
export function createApi(ctx: AppContext, edge: Middleware[] = []): H3 {
  const app = new H3({ onError: createErrorAnswer(ENDPOINTS), silent: true });
  for (const middleware of edge) app.use(middleware);
  app.use(answerUnrouted(ENDPOINTS));
  for (const [base, routes] of routeFamilies(ctx)) app.mount(base, routes);
  app.get(OPERATION_RULES.document.pattern, (event) => sendJson(event, openApiDocument(), CACHE_CONTROL.apiDocument));
  app.get(OPERATION_RULES.health.pattern, () => {
    const body = JSON.stringify({ status: 'ok', tree: basename(ctx.tree().dir) });
    return new Response(body, { headers: { ...HEALTH_HEADERS, 'content-length': String(Buffer.byteLength(body)) } });
  });
  app.options('/**', answerOptions(ENDPOINTS));
  return app;
}

/**
 * The origin: the rate limit (when on) before the static tree, both in front of the routes; then the
 * site's redirects and HTML 404 for page paths no route took.
 */
export function createOrigin(ctx: AppContext, limiter: RateLimiter | null): H3 {
  const source = { tree: ctx.tree, files: ctx.files, renderAlways: ctx.renderAlways, downloads: ctx.downloads };
  const limit = limiter ? [limitRequests(limiter, ctx.trustProxy, ENDPOINTS)] : [];
  return createApi(ctx, [...limit, serveTree(source), servePages(source)]);
}

/** Each route family with only what it reads (its own RouteDeps type): no family depends on the context. */
function routeFamilies(ctx: AppContext): [base: string, routes: H3][] {
  const { tree, downloads, now, renderer, publicUrl, servers, samples, chartCache } = ctx;
  const { files, imageCache, renderAlways, idempotency, ingestLimiter, tokens } = ctx;
  const { privateChartsFrom, trustProxy, chartUrlKeys, publishTokens, publishing } = ctx;
  // The tree's layout is the tree's: the version routes get a JAR's path, not tree/format.ts.
  const treeJarFile = (sha256: string) => jarFile(tree().dir, sha256);
  return [
    ['', publishRoutes({ tree, idempotency, publishTokens, publishing, now, endpoints: ENDPOINTS })],
    ['', downloadRoutes({ tree, downloads, now })],
    [VERSIONS_ROOT, versionRoutes({ tree, publicUrl, feedPages: FEED_PAGES, downloads, jarFile: treeJarFile })],
    ['', brandRoutes({ tree, files, imageCache, renderer, renderAlways })],
    [
      '',
      chartRoutes({
        servers,
        samples,
        idempotency,
        ingestLimiter,
        tokens,
        chartCache,
        now,
        privateChartsFrom,
        trustProxy,
        publicUrl,
        chartUrlKeys,
        renderer,
      }),
    ],
    ['', badgeRoutes({ tree, downloads, servers, samples, now, chartCache, renderer })],
    ['', projectRoutes({ tree, files, imageCache, renderer })],
  ];
}

const HEALTH_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  ...PRIVATE_HEADERS,
};
