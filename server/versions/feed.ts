import { Feed } from 'feed';
import type { Catalog } from './catalog.ts';
import { escapeXml } from '../helpers/escape-xml.ts';
import { changelogHtml } from '../changelog-markdown.ts';
import { channelOf, versionLabel } from './channels.ts';
import { describeMinecraft } from './minecraft.ts';
import { downloadPath, feedPath } from './paths.ts';
import type { CatalogVersion } from './schema.ts';
import type { ServerSoftware } from './software.ts';
import { projectIconPath } from '../project/paths.ts';
import type { ProjectRecord } from '../project/schema.ts';

/**
 * The site's pages a feed links to, passed in by whoever knows the site's paths (page-paths.ts's
 * FEED_PAGES): the history of a software's releases, or of all, and a version's page.
 */
export type FeedPages = {
  historyPage: (software: ServerSoftware | undefined) => string;
  versionPage: (id: string) => string;
};

/** How many releases a feed lists, newest first: readers poll it, so it stays small at 10,000 versions. */
export const FEED_ENTRIES = 50;

/**
 * Releases as Atom (RFC 4287), newest first: each entry's title names version, channel, softwares
 * and Java; its content is the sanitised changelog and the download link (the library's enclosures
 * guess an image type from the URL, so the link is in the content). Links are absolute, under
 * PUBLIC_URL. Built by the `feed` library, never by hand; what it puts in CDATA sections is HTML
 * made safe for one by feedHtml, since the library escapes only the first `]]>` (issue 27). A
 * withdrawn version's entry says so in its title and why in its summary and content (issue 29).
 */
export function releaseFeed(
  catalog: Catalog,
  publicUrl: string,
  pages: FeedPages,
  software?: ServerSoftware,
  project?: ProjectRecord,
): string {
  const url = (path: string) => new URL(path, publicUrl).href;
  const versions = feedVersions(catalog, software);
  // Issue 31: the project's name in the title and its icon as the feed's (Atom icon and logo).
  const name = project ? `${project.name} releases` : 'Plugin releases';
  const icons = project?.icon ? { favicon: url(projectIconPath(180)), image: url(projectIconPath(512)) } : {};
  const feed = new Feed({
    title: feedText(software ? `${name} for ${software}` : name),
    description: feedText(
      `Every ${project ? project.name : 'plugin'} release${software ? ` for ${software}` : ''}, newest first, with its changelog`,
    ),
    ...icons,
    id: url(feedPath(software)),
    link: url(pages.historyPage(software)),
    feedLinks: { atom: url(feedPath(software)) },
    // The newest change, so the same releases always give the same bytes (and ETag).
    updated: new Date(versions.reduce((newest, v) => (changedAt(v) > newest ? changedAt(v) : newest), '1970-01-01')),
    generator: 'plugin depot',
  });
  for (const version of versions) {
    const channel = channelOf(version);
    const user = catalog.users.get(version.createdBy);
    const facts = `${version.serverSoftware.join(', ')} on Java ${version.javaVersion}`;
    const { withdrawn } = version;
    const summary = `${channel === 'release' ? 'Release' : `A ${channel} version`} for ${facts}${version.minecraftVersion ? `, Minecraft ${describeMinecraft(version)}` : ''}: ${version.fileName}`;
    feed.addItem({
      title: feedHtml(escapeXml(`${withdrawn ? 'Withdrawn: ' : ''}${versionLabel(version)} for ${facts}`)),
      id: url(pages.versionPage(version.id)),
      link: url(pages.versionPage(version.id)),
      date: new Date(changedAt(version)),
      published: new Date(version.createdAt),
      description: feedHtml(escapeXml(withdrawn ? `Withdrawn: ${withdrawn.reason} (${summary})` : summary)),
      content: feedHtml(
        `${withdrawn ? `<p><strong>Withdrawn</strong>: ${escapeXml(withdrawn.reason)}</p>\n` : ''}${version.changelog === undefined ? '' : changelogHtml(version.changelog)}\n<p><a href="${escapeXml(url(downloadPath(version.id)))}">Download ${escapeXml(version.fileName)}</a></p>`,
      ),
      category: [
        { term: channel, name: `channel: ${channel}` },
        ...version.serverSoftware.map((name) => ({ term: name })),
        { term: `java-${version.javaVersion}`, name: `Java ${version.javaVersion}` },
        ...(withdrawn ? [{ term: 'withdrawn' }] : []),
      ],
      author: [{ name: xmlCharacters(user?.nickname ?? user?.username ?? version.createdBy) }],
    });
  }
  return feed.atom1();
}

/**
 * When an entry last changed: its withdrawal (issue 29), or its record's update when an edit came
 * later. ISO timestamps of one format compare as text.
 */
function changedAt(version: CatalogVersion): string {
  const withdrawnAt = version.withdrawn?.at;
  return withdrawnAt !== undefined && withdrawnAt > version.updatedAt ? withdrawnAt : version.updatedAt;
}

/**
 * The FEED_ENTRIES entries, newest first: by release time, a withdrawn version by its withdrawal's,
 * so that an old version's withdrawal still reaches the feed's readers. Without a withdrawn
 * version, the newest releases as the catalog orders them.
 */
function feedVersions(catalog: Catalog, software: ServerSoftware | undefined): CatalogVersion[] {
  const versions = catalog.versions.filter((version) => !software || version.serverSoftware.includes(software));
  if (!versions.some((version) => version.withdrawn)) return versions.slice(0, FEED_ENTRIES);
  const shownAt = (version: CatalogVersion) => version.withdrawn?.at ?? version.createdAt;
  // A stable sort: versions of one time keep the catalog's order (SPEC 2.4.2's newest first).
  return versions
    .sort((a, b) => (shownAt(a) < shownAt(b) ? 1 : shownAt(a) > shownAt(b) ? -1 : 0))
    .slice(0, FEED_ENTRIES);
}

/**
 * HTML for a CDATA section: every `]]>` written `]]&gt;`, the same HTML (in text and in attribute
 * values alike), so no text can end the section; and no character XML cannot hold.
 */
function feedHtml(html: string): string {
  return xmlCharacters(html).replaceAll(']]>', ']]&gt;');
}

/**
 * Text for an element the library writes as text: it escapes `<`, `>` and a `&` that starts no
 * entity, so `&amp;` in a project's name would read as `&`; every `&` escaped first reads as written.
 */
function feedText(text: string): string {
  return xmlCharacters(text).replaceAll('&', '&amp;');
}

/**
 * Text without the characters XML 1.0 cannot hold (C0 controls but tab and line breaks, lone
 * surrogates, U+FFFE and U+FFFF), dropped. The character rule keeps them out of data/; a
 * feed stays well-formed XML even for a record that predates it.
 */
function xmlCharacters(text: string): string {
  return text.replace(NOT_XML, '');
}
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
