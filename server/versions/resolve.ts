import { CHANNELS, channelOf, channelsShowing, type Channel } from './channels.ts';
import { RUNS_PLUGINS_OF, runsOnJava } from './compat.ts';
import { describeMinecraft, supportsMinecraft } from './minecraft.ts';
import type { CatalogVersion } from './schema.ts';
import { JAVA_VERSIONS, type JavaVersion, type ServerSoftware } from './software.ts';

/** What a server runs: its software, and when it says so its Java and Minecraft versions. */
export type ServerQuery = {
  software: ServerSoftware;
  java?: JavaVersion | undefined;
  minecraft?: string | undefined;
  channel: Channel;
};

/** The build chosen and which of its softwares matched (`resolvedFrom`). */
export type Resolved = { version: CatalogVersion; software: ServerSoftware };

/** Each software's versions, newest first: resolution scans a few short lists, not the whole catalog. */
const BY_SOFTWARE = new WeakMap<readonly CatalogVersion[], Map<ServerSoftware, CatalogVersion[]>>();

function versionsOf(newestFirst: readonly CatalogVersion[], software: ServerSoftware): readonly CatalogVersion[] {
  let index = BY_SOFTWARE.get(newestFirst);
  if (!index) {
    index = new Map();
    for (const version of newestFirst)
      for (const name of version.serverSoftware) (index.get(name) ?? index.set(name, []).get(name)!).push(version);
    BY_SOFTWARE.set(newestFirst, index);
  }
  return index.get(software) ?? [];
}

/**
 * The best build for a server. Preference order: first the software rank (the server's own
 * software, then each of RUNS_PLUGINS_OF in order: a native build beats a compatible one whatever
 * their age), then SPEC 2.4.2's newest first (createdAt, then plugin version, then id), whatever
 * the build's Java version, as SPEC 2.4.4 picks without a Java version: a newer Java 17 build beats
 * an older Java 21 one on a Java 21 server. Only versions shown in `channel` (channelsShowing), never
 * a withdrawn one.
 */
export function resolveBuild(newestFirst: readonly CatalogVersion[], query: ServerQuery): Resolved | undefined {
  for (const software of RUNS_PLUGINS_OF[query.software]) {
    const version = versionsOf(newestFirst, software).find(
      (candidate) =>
        !candidate.withdrawn &&
        channelsShowing(channelOf(candidate)).includes(query.channel) &&
        (query.java === undefined || runsOnJava(candidate.javaVersion, query.java)) &&
        (query.minecraft === undefined || supportsMinecraft(candidate, query.minecraft)),
    );
    if (version) return { version, software };
  }
  return undefined;
}

/**
 * The 404 message when nothing resolves: what the server asked, then what would resolve if it
 * changed one thing (a newer Java, another Minecraft version, a less stable channel).
 */
export function explainNoBuild(newestFirst: readonly CatalogVersion[], query: ServerQuery): string {
  const asked = [
    `No build for ${query.software}`,
    query.java ? ` on Java ${query.java}` : '',
    query.minecraft ? ` for Minecraft ${query.minecraft}` : '',
    query.channel === 'release' ? '' : ` in the ${query.channel} channel`,
  ].join('');
  const options: string[] = [];
  if (query.java) {
    let previous: CatalogVersion | undefined;
    for (const java of JAVA_VERSIONS.filter((java) => Number(java) > Number(query.java))) {
      const found = resolveBuild(newestFirst, { ...query, java })?.version;
      if (found && found !== previous) options.push(`for Java ${java}: ${found.pluginVersion}`);
      previous = found ?? previous;
    }
  }
  if (query.minecraft) {
    const found = resolveBuild(newestFirst, { ...query, minecraft: undefined })?.version;
    if (found) options.push(`for Minecraft ${describeMinecraft(found)}: ${found.pluginVersion}`);
  }
  for (const channel of CHANNELS.slice(CHANNELS.indexOf(query.channel) + 1)) {
    const found = resolveBuild(newestFirst, { ...query, channel })?.version;
    if (found) {
      options.push(`in the ${channel} channel: ${found.pluginVersion}`);
      break;
    }
  }
  if (options.length > 0) return `${asked}; available ${options.join('; ')}`;
  if (resolveBuild(newestFirst, { software: query.software, channel: 'alpha' }))
    return `${asked}; changing only one of these does not find one either`;
  const chain = RUNS_PLUGINS_OF[query.software];
  const runs = chain.length > 1 ? ` (it runs builds for ${chain.join(', ')})` : '';
  return `${asked}; no version of the plugin runs on ${query.software}${runs}`;
}
