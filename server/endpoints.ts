import { createEndpointTable, isChargedByRoute } from './http/endpoints.ts';
import { OPENAPI_PATHS } from './openapi.ts';

/** The service's endpoint table, read off its OpenAPI paths once; the app hands it to the edge. */
export const ENDPOINTS = createEndpointTable(OPENAPI_PATHS);

/**
 * Does a precomputed answer at this path count against SPEC 8's limit? Limited endpoints do, except
 * those whose routes charge for themselves (SPEC 8: cached images do not count). Static servers in front read this.
 */
export function countsWhenPrecomputed(path: string): boolean {
  return ENDPOINTS.findOperation('GET', path)?.limited === true && !isChargedByRoute(path);
}
