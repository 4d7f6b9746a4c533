import { END_OF_LIFE } from '../../../server/versions/compat.ts';
import type { Catalog } from '../../../server/versions/catalog.ts';
import { changelogHtml } from '../../../server/changelog-markdown.ts';
import { channelOf } from '../../../server/versions/channels.ts';
import { BRAND_NAMES } from '../../../server/brands/brands.ts';
import { brandImagePath } from '../../../server/brands/paths.ts';
import { historyPagePath, versionPagePath } from '../../../server/page-paths.ts';
import { BRAND_SOFTWARE } from './brand-kit.ts';
import { pickLatest, successorOf } from '../../../server/versions/latest.ts';
import { presentVersion } from '../../../server/versions/present.ts';
import type { PluginVersion, Withdrawal } from '../../../server/versions/schema.ts';
import { SERVER_SOFTWARE, SOFTWARE_GROUPS, type ServerSoftware } from '../../../server/versions/software.ts';
import { JAVA_VERSIONS, type JavaVersion, runsOnJava } from '../../../server/versions/java.ts';

/** SPEC 2.3's group names, as the downloads page heads them. */
const GROUP_TITLES: Record<keyof typeof SOFTWARE_GROUPS, string> = {
  normal: 'Normal servers',
  folia: 'Folia servers',
  proxy: 'Proxy servers',
};

export type SoftwareDownloads = {
  software: ServerSoftware;
  /** SPEC 2.4.4: the newest for the software, whatever its Java version. */
  newest: PluginVersion | undefined;
  /** The latest per Java version, oldest Java first. */
  byJava: { java: JavaVersion; version: PluginVersion }[];
  /** A beta or alpha newer than `newest`: offered beside it, never as the main download. */
  preRelease: PluginVersion | undefined;
};

/** The downloads page: per SPEC 2.3 group, per software, the latest version and the latest per Java. */
export function downloadGroups(catalog: Catalog) {
  const present = (record: Parameters<typeof presentVersion>[1] | undefined) =>
    record ? presentVersion(catalog, record, true) : undefined;
  return (Object.keys(SOFTWARE_GROUPS) as (keyof typeof SOFTWARE_GROUPS)[]).map((group) => ({
    group,
    title: GROUP_TITLES[group],
    softwares: SOFTWARE_GROUPS[group].map((software): SoftwareDownloads => ({
      software,
      newest: present(pickLatest(catalog.latest, software)),
      preRelease: present(preReleaseOf(catalog, software)),
      byJava: JAVA_VERSIONS.flatMap((java) => {
        const version = present(pickLatest(catalog.latest, software, java));
        return version ? [{ java, version }] : [];
      }),
    })),
  }));
}

/** The newest version of any channel for a software, when it is not a release (else undefined). */
function preReleaseOf(catalog: Catalog, software: ServerSoftware) {
  const newest = pickLatest(catalog.latest, software, undefined, 'alpha');
  return newest && channelOf(newest) !== 'release' ? newest : undefined;
}

/** A page of the version history: every version, or those of one software and/or Java version. */
export type HistoryFilter = { software: ServerSoftware | undefined; java: JavaVersion | undefined };

/** /versions, or /versions/<software|all>/<java|all>: static pages, so the filter works without JavaScript. */
export function historyPath({ software, java }: HistoryFilter): string {
  return historyPagePath(software?.toLowerCase(), java);
}

/** Every filtered page but the unfiltered one (that is /versions). */
export function historyFilters(): HistoryFilter[] {
  const softwares = [undefined, ...SERVER_SOFTWARE];
  const javas = [undefined, ...JAVA_VERSIONS];
  return softwares.flatMap((software) => javas.map((java) => ({ software, java }))).filter((f) => f.software || f.java);
}

/** The versions (as presented, newest first) a history page of this filter lists. */
export function filterHistory(versions: readonly PluginVersion[], { software, java }: HistoryFilter): PluginVersion[] {
  return versions.filter(
    (v) => (!software || v.serverSoftware.includes(software)) && (!java || runsOnJava(v.javaVersion, java)),
  );
}

export function describeFilter({ software, java }: HistoryFilter): string {
  if (software && java) return `${software} on Java ${java}`;
  if (software) return software;
  if (java) return `servers on Java ${java}`;
  return 'every server software and Java version';
}

/**
 * What an admin picks on a history page: per software, its newest release among the page's
 * versions (newest first): on /versions the newest whatever its Java (SPEC 2.4.4, the downloads
 * page's button), on a Java page the newest that runs on that Java; on a software's page, for that
 * software alone. Software -> version id.
 */
export function latestOnPage(versions: readonly PluginVersion[], only?: ServerSoftware): Map<ServerSoftware, string> {
  const picks = new Map<ServerSoftware, string>();
  for (const version of versions) {
    // Issue 29: a withdrawn version is latest for nothing, here as in the API.
    if (version.channel !== 'release' || version.withdrawn) continue;
    for (const software of version.serverSoftware)
      if (!picks.has(software) && (!only || software === only)) picks.set(software, version.id);
  }
  return picks;
}

/** A software's mark as static brand images (32 px, 64 px for dense screens), or undefined. */
export function softwareMark(software: ServerSoftware): { light: string; dark: string | undefined } | undefined {
  const brand = BRAND_NAMES.find((name) => BRAND_SOFTWARE[name].software === software);
  if (!brand) return undefined;
  const { mark } = BRAND_SOFTWARE[brand];
  const srcset = (variant: string) =>
    `${brandImagePath(brand, variant, 'png', 32)} 1x, ${brandImagePath(brand, variant, 'png', 64)} 2x`;
  return { light: srcset(mark.light), dark: mark.dark && srcset(mark.dark) };
}

/** Issue 31: a software its makers ended, as its entries say so: when, what they recommend, and where. */
export type EndOfLifeNote = {
  software: ServerSoftware;
  /** YYYY-MM, as the API's endOfLife.since. */
  since: string;
  successor: ServerSoftware;
  /** The site's page of the successor's builds. */
  successorPage: string;
  /** The successor's own site, as the API's endOfLife.url. */
  url: string;
};

/** The note a software's entries carry when it reached end of life (END_OF_LIFE, the table resolve answers from), else undefined. */
export function endOfLifeNote(software: ServerSoftware): EndOfLifeNote | undefined {
  const ended = END_OF_LIFE[software];
  if (!ended) return undefined;
  return { software, ...ended, successorPage: historyPath({ software: ended.successor, java: undefined }) };
}

/** Every version as its page shows it (the /version/<id> pages). */
export function versionPages(catalog: Catalog): PluginVersion[] {
  return catalog.versions.map((v) => presentVersion(catalog, v, true));
}

/** Issue 29: a withdrawn version's warning: why, when, by whom, and the version its users move to. */
export type WithdrawnNotice = Withdrawal & { successor: PluginVersion | undefined };

/** The warning a withdrawn version's page shows (undefined when it is not withdrawn). */
export function withdrawnNotice(catalog: Catalog, version: PluginVersion): WithdrawnNotice | undefined {
  const record = catalog.byId.get(version.id);
  if (!version.withdrawn || !record) return undefined;
  const successor = successorOf(catalog.latest, record);
  return { ...version.withdrawn, successor: successor && presentVersion(catalog, successor, true) };
}

/** The page of one version: its permanent link. */
export function versionPath(version: { id: string }): string {
  return versionPagePath(version.id);
}

/**
 * This file's own URL, then the latest-download URLs (SPEC 4.1, 4.2) of each of its softwares; for
 * a beta or alpha, those of its channel (`?channel=`), which is where it can be the latest.
 */
export function stableUrls(version: PluginVersion): { label: string; path: string }[] {
  const channel = version.channel === 'release' ? '' : `?channel=${version.channel}`;
  const inChannel = channel ? ` (${version.channel} channel)` : '';
  return [
    { label: 'This file', path: version.downloadUrl },
    ...version.serverSoftware.flatMap((software) => [
      {
        label: `Latest for ${software} on Java ${version.javaVersion}${inChannel}`,
        path: `/api/plugin-versions/download/latest/${software.toLowerCase()}/${version.javaVersion}${channel}`,
      },
      {
        label: `Latest for ${software}, any Java${inChannel}`,
        path: `/api/plugin-versions/download/latest/${software.toLowerCase()}${channel}`,
      },
    ]),
  ];
}

/** A changelog as the page shows it: sanitised HTML (changelogHtml), or undefined. */
export function changelogOf(version: PluginVersion): string | undefined {
  return version.changelog === undefined ? undefined : changelogHtml(version.changelog);
}

export { JAVA_VERSIONS, SERVER_SOFTWARE };
