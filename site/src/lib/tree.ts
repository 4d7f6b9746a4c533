import type { TreeCatalog } from '../../../server/tree/open.ts';

/**
 * What the build gives a page it renders (build/site.ts): the tree being built, where it is served
 * (PUBLIC_URL: Open Graph and Twitter want absolute URLs), and the page's own data from pages.ts,
 * which is all a version or history page reads: the build renders it again only when that changes.
 */
export type SiteRender = {
  tree: TreeCatalog & { dir: string };
  publicUrl: string;
  page: unknown;
};

/** The render's data, as the build passed it to this page. */
export const siteRender = (locals: App.Locals): SiteRender => locals.depot;
