import type { Catalog } from './catalog.ts';
import { JAR_EXPOSED_HEADERS } from './integrity.ts';
import { successorOf } from './latest.ts';
import { downloadPath } from './paths.ts';
import type { CatalogVersion } from './schema.ts';

/**
 * Issue 29: what the download of a withdrawn version adds, none for any other. RFC 9745
 * `Deprecation` is a structured-field date (`@` and whole seconds since the epoch) of the
 * withdrawal; RFC 8288's `Link` with RFC 5829's `successor-version` names the download its users
 * move to, when one exists. Web pages may read both.
 */
export function withdrawalHeaders(catalog: Catalog, version: CatalogVersion): Record<string, string> {
  if (!version.withdrawn) return {};
  const successor = successorOf(catalog.latest, version);
  return {
    deprecation: `@${Math.floor(Date.parse(version.withdrawn.at) / 1000)}`,
    ...(successor ? { link: `<${downloadPath(successor.id)}>; rel="successor-version"` } : {}),
    'access-control-expose-headers': `${JAR_EXPOSED_HEADERS}, Deprecation, Link`,
  };
}
