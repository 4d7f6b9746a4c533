import { oneOf, pathRule } from './http/path-rule.ts';
import { BRAND_LINKS_ROOT } from './brands/paths.ts';
import { PLUGIN_VERSION_ID } from './versions/schema.ts';
import { SERVER_SOFTWARE } from './versions/software.ts';
import { JAVA_VERSIONS } from './versions/java.ts';
import type { FeedPages } from './versions/feed.ts';

/**
 * The human site's URLs, each written once, and the line between the site and the endpoints: paths
 * under ENDPOINT_PREFIXES are the API's and the brand images', never pages (pages.ts adds the
 * documented endpoints outside them, /healthz).
 */
const API_ROOT = '/api/';
export const ENDPOINT_PREFIXES = [API_ROOT, BRAND_LINKS_ROOT] as const;

/** Under an endpoint prefix: the API or a brand image, whatever follows. */
export const isUnderEndpointPrefix = (path: string) => ENDPOINT_PREFIXES.some((prefix) => path.startsWith(prefix));

/** The history's "every software" and "every Java version" segment. */
export const HISTORY_ALL = 'all';

export const PAGE_RULES = {
  home: pathRule('/'),
  badges: pathRule('/badges'),
  brands: pathRule('/brands'),
  charts: pathRule('/charts'),
  reference: pathRule('/reference'),
  /** The site's "page not found" (site/src/pages/404.astro), answered for any page path without one. */
  notFound: pathRule('/404'),
  version: pathRule('/version/:id', { id: PLUGIN_VERSION_ID.source.slice(1, -1) }),
  history: pathRule('/versions'),
  /** The canonical form: a software's lowercase name or `all`, a Java version or `all` (pages.ts redirects the rest). */
  filteredHistory: pathRule('/versions/:software/:java', {
    software: oneOf([...SERVER_SOFTWARE.map((software) => software.toLowerCase()), HISTORY_ALL]),
    java: oneOf([...JAVA_VERSIONS, HISTORY_ALL]),
  }),
  /** The pages' scripts and styles, as Astro names them. */
  asset: pathRule('/_site/:file', { file: '[^?]+' }),
} as const;

/** /versions, or /versions/<software|all>/<java|all> (lowercase software). */
export function historyPagePath(software: string | undefined, java: string | undefined): string {
  if (software === undefined && java === undefined) return PAGE_RULES.history.pattern;
  return PAGE_RULES.filteredHistory.build({ software: software ?? HISTORY_ALL, java: java ?? HISTORY_ALL });
}

/**
 * An older page of a version history (site/src/lib/pages.ts): `page` counts from the first releases,
 * so a release never renumbers it. /versions/page/3, /versions/paper/all/page/3.
 */
export const historyArchivePath = (historyPath: string, page: number) => `${historyPath}/page/${page}`;

/** The page of one version: its permanent link. */
export const versionPagePath = (id: string) => PAGE_RULES.version.build({ id });

/** The pages a release feed links to (versions/feed.ts): a software's history, at its canonical path, and a version's. */
export const FEED_PAGES: FeedPages = {
  historyPage: (software) => historyPagePath(software?.toLowerCase(), undefined),
  versionPage: versionPagePath,
};
