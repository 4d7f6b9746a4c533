import type { Catalog } from '../../../server/versions/catalog.ts';
import type { PluginVersion } from '../../../server/versions/schema.ts';
import type { ServerSoftware } from '../../../server/versions/software.ts';
import { PAGE_RULES, historyArchivePath, versionPagePath } from '../../../server/page-paths.ts';
import {
  filterHistory,
  historyFilters,
  historyPath,
  latestOnPage,
  versionPages,
  withdrawnNotice,
  type HistoryFilter,
  type WithdrawnNotice,
} from './versions.ts';

/**
 * Every page of the site and the data it renders from. A page with `data` reads nothing else of the
 * tree (besides the project and PUBLIC_URL, which every page shows): the build renders it again only
 * when its data changed, so a release renders its own page and the history pages it appears on, not
 * ten thousand. A page without `data` reads the whole tree and is rendered by every build.
 */
export type SitePage = { path: string; data?: VersionPageData | HistoryPageData };

export type VersionPageData = { version: PluginVersion; withdrawn: WithdrawnNotice | undefined };

/**
 * One page of a history: its filter's newest versions (between HISTORY_PAGE_SIZE and twice that) at
 * the filter's address, older ones in pages of HISTORY_PAGE_SIZE counted from the first release, so
 * that a release changes the newest page and never renumbers the others.
 */
export type HistoryPageData = {
  filter: HistoryFilter;
  /** This page's versions, newest first. */
  versions: PluginVersion[];
  /** Of those, the latest release per software for the whole filter (the one to pick). */
  latest: [ServerSoftware, string][];
  /** Versions of the filter in all. Only on its newest page: on older pages it would change with every release. */
  total: number | undefined;
  /** Which older page this is (1 holds the first releases), or undefined for the newest. */
  page: number | undefined;
  /** The pages beside it: the next newer one (the filter's address past the last), and the next older. */
  newer: string | undefined;
  older: string | undefined;
  /** The first versions on this page count from (1-based, oldest first): shown on older pages. */
  from: number;
};

const HISTORY_PAGE_SIZE = 100;

/** The pages that read the whole tree: downloads, badges, brand kit, charts, API reference, 404. */
const WHOLE_TREE_PAGES = [
  PAGE_RULES.home,
  PAGE_RULES.badges,
  PAGE_RULES.brands,
  PAGE_RULES.charts,
  PAGE_RULES.reference,
  PAGE_RULES.notFound,
].map((rule) => rule.pattern);

/** Every page, and the versions as presented, which the pages' data holds (the same objects). */
export function sitePages(catalog: Catalog): { pages: SitePage[]; presented: PluginVersion[] } {
  const presented = versionPages(catalog);
  const pages = [
    ...WHOLE_TREE_PAGES.map((path) => ({ path })),
    ...presented.map((version) => ({
      path: versionPagePath(version.id),
      data: { version, withdrawn: withdrawnNotice(catalog, version) },
    })),
    ...[{ software: undefined, java: undefined }, ...historyFilters()].flatMap((filter) =>
      historyPages(filterHistory(presented, filter), filter),
    ),
  ];
  return { pages, presented };
}

/** A filter's history: its newest page at the filter's address, then its older pages. */
function historyPages(versions: PluginVersion[], filter: HistoryFilter): SitePage[] {
  const latest = latestOnPage(versions, filter.software);
  const marks = (shown: PluginVersion[]) => [...latest].filter(([, id]) => shown.some((v) => v.id === id));
  // Older pages: every full HISTORY_PAGE_SIZE of the oldest, leaving the newest page at least that many.
  const older = Math.max(0, Math.floor(versions.length / HISTORY_PAGE_SIZE) - 1);
  const archivePath = (page: number) => historyArchivePath(historyPath(filter), page);
  const newestShown = versions.slice(0, versions.length - older * HISTORY_PAGE_SIZE);
  const newest: SitePage = {
    path: historyPath(filter),
    data: {
      filter,
      versions: newestShown,
      latest: marks(newestShown),
      total: versions.length,
      page: undefined,
      newer: undefined,
      older: older > 0 ? archivePath(older) : undefined,
      from: older * HISTORY_PAGE_SIZE + 1,
    },
  };
  const pages = Array.from({ length: older }, (_, index): SitePage => {
    const page = index + 1;
    // Newest first, as on every page: the oldest versions are at the end of the filter's list.
    const end = versions.length - (page - 1) * HISTORY_PAGE_SIZE;
    const shown = versions.slice(end - HISTORY_PAGE_SIZE, end);
    return {
      path: archivePath(page),
      data: {
        filter,
        versions: shown,
        latest: marks(shown),
        total: undefined,
        page,
        newer: page === older ? historyPath(filter) : archivePath(page + 1),
        older: page > 1 ? archivePath(page - 1) : undefined,
        from: (page - 1) * HISTORY_PAGE_SIZE + 1,
      },
    };
  });
  return [newest, ...pages];
}
