import { createEndpointTable } from './http/endpoints.ts';
import { OPENAPI_PATHS } from './openapi.ts';
import { BRAND_RULES } from './brands/paths.ts';
import { CHART_RULES } from './charts/paths.ts';
import { VERSION_RULES } from './versions/paths.ts';

/**
 * SPEC 8's exemption lives in these routes: brand images (both forms) and a server's chart charge
 * the rate limit themselves (chargeLimit).
 */
const CHARGED_BY_ROUTE = [BRAND_RULES.image, BRAND_RULES.sizedLink, BRAND_RULES.variantLink, CHART_RULES.players].map(
  (rule) => rule.template,
);

/**
 * Endpoints whose parameters must have their shape to be that endpoint: a version's own path takes
 * every single segment under the root, and only an id is one (any other segment is no endpoint: 404,
 * never 405). Elsewhere a parameter of the wrong shape is the endpoint's own 400 or 404.
 */
export const SHAPED_RULES = [VERSION_RULES.version];
const acceptsShape = (template: string, path: string) =>
  SHAPED_RULES.every((rule) => rule.template !== template || rule.match(path) !== undefined);

/** The service's endpoint table, read off its OpenAPI paths once; the app hands it to the edge. */
export const ENDPOINTS = createEndpointTable(OPENAPI_PATHS, CHARGED_BY_ROUTE, acceptsShape);

/**
 * Does a precomputed answer at this path count against SPEC 8's limit? Limited endpoints do, except
 * those whose routes charge for themselves (SPEC 8: cached images do not count). Static servers in front read this.
 */
export function countsWhenPrecomputed(path: string): boolean {
  const operation = ENDPOINTS.findOperation('GET', path);
  return operation?.limited === true && !operation.chargedByRoute;
}
