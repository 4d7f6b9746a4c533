import { Feed } from 'feed';
import type { Catalog } from './catalog.ts';
import { escapeXml } from '../escape-xml.ts';
import { changelogHtml } from './changelog.ts';
import { channelOf } from './channels.ts';
import { describeMinecraft } from './minecraft.ts';
import { downloadPath, feedPath } from './paths.ts';
import { historyPagePath, versionPagePath } from '../page-paths.ts';
import type { ServerSoftware } from './software.ts';

/** How many releases a feed lists, newest first: readers poll it, so it stays small at 10,000 versions. */
export const FEED_ENTRIES = 50;

/**
 * Releases as Atom (RFC 4287), newest first: each entry's title names version, channel, softwares
 * and Java; its content is the sanitised changelog and the download link (the library's enclosures
 * guess an image type from the URL, so the link is in the content). Links are absolute, under
 * PUBLIC_URL. Built by the `feed` library, never by hand; what it puts in CDATA sections is HTML
 * made safe for one by feedHtml, since the library escapes only the first `]]>` (issue 27).
 */
export function releaseFeed(catalog: Catalog, publicUrl: string, software?: ServerSoftware): string {
  const url = (path: string) => new URL(path, publicUrl).href;
  const versions = catalog.versions
    .filter((version) => !software || version.serverSoftware.includes(software))
    .slice(0, FEED_ENTRIES);
  const feed = new Feed({
    title: software ? `Plugin releases for ${software}` : 'Plugin releases',
    description: `Every plugin release${software ? ` for ${software}` : ''}, newest first, with its changelog`,
    id: url(feedPath(software)),
    link: url(historyPagePath(software?.toLowerCase(), undefined)),
    feedLinks: { atom: url(feedPath(software)) },
    // The newest change, so the same releases always give the same bytes (and ETag).
    updated: new Date(versions.reduce((newest, v) => (v.updatedAt > newest ? v.updatedAt : newest), '1970-01-01')),
    generator: 'plugin depot',
  });
  for (const version of versions) {
    const channel = channelOf(version);
    const user = catalog.users.get(version.createdBy);
    const facts = `${version.serverSoftware.join(', ')} on Java ${version.javaVersion}`;
    feed.addItem({
      title: feedHtml(
        escapeXml(`${version.pluginVersion}${channel === 'release' ? '' : ` (${channel})`} for ${facts}`),
      ),
      id: url(versionPagePath(version.id)),
      link: url(versionPagePath(version.id)),
      date: new Date(version.updatedAt),
      published: new Date(version.createdAt),
      description: feedHtml(
        escapeXml(
          `${channel === 'release' ? 'Release' : `A ${channel} version`} for ${facts}${version.minecraftVersion ? `, Minecraft ${describeMinecraft(version)}` : ''}: ${version.fileName}`,
        ),
      ),
      content: feedHtml(
        `${version.changelog === undefined ? '' : changelogHtml(version.changelog)}\n<p><a href="${escapeXml(url(downloadPath(version.id)))}">Download ${escapeXml(version.fileName)}</a></p>`,
      ),
      category: [
        { term: channel, name: `channel: ${channel}` },
        ...version.serverSoftware.map((name) => ({ term: name })),
        { term: `java-${version.javaVersion}`, name: `Java ${version.javaVersion}` },
      ],
      author: [{ name: xmlCharacters(user?.nickname ?? user?.username ?? version.createdBy) }],
    });
  }
  return feed.atom1();
}

/**
 * HTML for a CDATA section: every `]]>` written `]]&gt;`, the same HTML (in text and in attribute
 * values alike), so no text can end the section; and no character XML cannot hold.
 */
function feedHtml(html: string): string {
  return xmlCharacters(html).replaceAll(']]>', ']]&gt;');
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
