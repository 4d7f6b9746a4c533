import type { TreeCatalog } from '../../../server/tree/open.ts';
import type { RouteLookup } from '../../../server/tree/routes.ts';

/**
 * What the build gives a page it renders (build/site.ts): the tree being built, where it is served
 * (PUBLIC_URL: Open Graph and Twitter want absolute URLs), and the page's own data from pages.ts,
 * which is all a version or history page reads: the build renders it again only when that changes.
 */
export type SiteRender = {
  /** `routes`: the tree's precomputed answers, which the API reference's examples are served from as the origin serves them. */
  tree: TreeCatalog & { dir: string; routes?: RouteLookup };
  publicUrl: string;
  page: unknown;
};

/** The render's data, as the build passed it to this page. */
export const siteRender = (locals: App.Locals): SiteRender => locals.depot;
