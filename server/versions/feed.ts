import { Feed } from 'feed';
import type { Catalog } from './catalog.ts';
import { escapeXml } from '../escape-xml.ts';
import { changelogHtml } from './changelog.ts';
import { channelOf } from './channels.ts';
import { describeMinecraft } from './minecraft.ts';
import { downloadPath, feedPath } from './present.ts';
import type { ServerSoftware } from './software.ts';

/** How many releases a feed lists, newest first: readers poll it, so it stays small at 10,000 versions. */
export const FEED_ENTRIES = 50;

/**
 * Releases as Atom (RFC 4287), newest first: each entry's title names version, channel, softwares
 * and Java; its content is the sanitised changelog and the download link (the library's enclosures
 * guess an image type from the URL, so the link is in the content). Links are absolute, under
 * PUBLIC_URL. Built by the `feed` library, never by hand.
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
    link: url(software ? `/versions/${software.toLowerCase()}/all` : '/versions'),
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
      title: `${version.pluginVersion}${channel === 'release' ? '' : ` (${channel})`} for ${facts}`,
      id: url(`/version/${version.id}`),
      link: url(`/version/${version.id}`),
      date: new Date(version.updatedAt),
      published: new Date(version.createdAt),
      description: `${channel === 'release' ? 'Release' : `A ${channel} version`} for ${facts}${version.minecraftVersion ? `, Minecraft ${describeMinecraft(version)}` : ''}: ${version.fileName}`,
      content: `${version.changelog === undefined ? '' : changelogHtml(version.changelog)}\n<p><a href="${escapeXml(url(downloadPath(version.id)))}">Download ${escapeXml(version.fileName)}</a></p>`,
      category: [
        { term: channel, name: `channel: ${channel}` },
        ...version.serverSoftware.map((name) => ({ term: name })),
        { term: `java-${version.javaVersion}`, name: `Java ${version.javaVersion}` },
      ],
      author: [{ name: user?.nickname ?? user?.username ?? version.createdBy }],
    });
  }
  return feed.atom1();
}
