import { CHANNELS, channelOf, channelsShowing, type Channel } from './channels.ts';
import { RUNS_FOLIA_SUPPORTED, RUNS_PLUGINS_OF, chainOf, stepTakes, type ChainStep } from './compat.ts';
import { describeMinecraft, supportsMinecraft } from './minecraft.ts';
import { guaranteedJavaOf } from './minecraft-java.ts';
import type { CatalogVersion, PluginVersionRecord } from './schema.ts';
import { isProxy, type ServerSoftware } from './software.ts';
import { JAVA_VERSIONS, type JavaVersion, runsOnJava } from './java.ts';

/** What a server runs: its software, and when it says so its Java and Minecraft versions. */
export type ServerQuery = {
  software: ServerSoftware;
  java?: JavaVersion | undefined;
  minecraft?: string | undefined;
  channel: Channel;
};

/**
 * The build chosen, which of its softwares matched (`resolvedFrom`; a foliaSupported build's first),
 * its step in the server's chain, and `unverified` when it is a Spigot or Bukkit build past Paper's hard fork.
 */
export type Resolved = { version: CatalogVersion; software: ServerSoftware; step: number; unverified: boolean };

/** Each software's versions, newest first, and the foliaSupported ones (key `true`): resolution scans a few short lists, not the whole catalog. */
const BY_SOFTWARE = new WeakMap<readonly CatalogVersion[], Map<ServerSoftware | true, CatalogVersion[]>>();

function versionsOf(newestFirst: readonly CatalogVersion[], step: ChainStep): readonly CatalogVersion[] {
  let index = BY_SOFTWARE.get(newestFirst);
  if (!index) {
    index = new Map();
    const add = (key: ServerSoftware | true, version: CatalogVersion) =>
      (index!.get(key) ?? index!.set(key, []).get(key)!).push(version);
    for (const version of newestFirst) {
      for (const name of version.serverSoftware) add(name, version);
      if (version.foliaSupported) add(true, version);
    }
    BY_SOFTWARE.set(newestFirst, index);
  }
  return index.get('foliaSupported' in step ? true : step.software) ?? [];
}

/**
 * The newest Java a server asking `query` surely runs: the one it names; else, issue 39, the one
 * every server of its Minecraft version runs (a 1.21.11 server may run Java 21, so a Java 25 build
 * is not offered it); else any. A proxy's Java is its own, whatever its game servers run.
 */
function javaCapOf(query: Pick<ServerQuery, 'software' | 'java' | 'minecraft'>): JavaVersion | undefined {
  if (query.java !== undefined || query.minecraft === undefined || isProxy(query.software)) return query.java;
  return guaranteedJavaOf(query.minecraft);
}

/** Would a server asking `query` take this build, leaving its software aside: channel, Java, Minecraft, not withdrawn. */
export function runsOnServer(candidate: PluginVersionRecord, query: ServerQuery): boolean {
  const java = javaCapOf(query);
  return (
    !candidate.withdrawn &&
    channelsShowing(channelOf(candidate)).includes(query.channel) &&
    (java === undefined || runsOnJava(candidate.javaVersion, java)) &&
    (query.minecraft === undefined || supportsMinecraft(candidate, query.minecraft))
  );
}

/** The first step of the server's chain that takes this build, whatever its Java, Minecraft and channel; -1 when none does. */
export function chainStepOf(
  candidate: PluginVersionRecord,
  query: Pick<ServerQuery, 'software' | 'minecraft'>,
): number {
  return chainOf(query.software).findIndex((step) => stepTakes(step, query.software, candidate, query.minecraft));
}

/**
 * The best build for a server. Preference order: first the step of its chain (chainOf: the
 * server's own software, then each of RUNS_PLUGINS_OF in order, a native build beating a
 * compatible one whatever their age; Spigot builds past Paper's hard fork and Folia's last on
 * Paper and its forks, foliaSupported builds last on Folia and CanvasMC), then SPEC 2.4.2's newest
 * first (createdAt, then plugin version, then id), whatever the build's Java version, as SPEC
 * 2.4.4 picks without a Java version: a newer Java 17 build beats an older Java 21 one on a Java 21
 * server. Only versions shown in `channel` (channelsShowing), never a withdrawn one.
 */
export function resolveBuild(newestFirst: readonly CatalogVersion[], query: ServerQuery): Resolved | undefined {
  const chain = chainOf(query.software);
  for (const [step, link] of chain.entries()) {
    const version = versionsOf(newestFirst, link).find(
      (candidate) => stepTakes(link, query.software, candidate, query.minecraft) && runsOnServer(candidate, query),
    );
    if (!version) continue;
    const software = 'software' in link ? link.software : version.serverSoftware[0]!;
    return { version, software, step, unverified: 'unverified' in link };
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
  // Without a Java, the one its Minecraft version guarantees stands in the way as a named one would.
  const cap = javaCapOf(query);
  if (cap) {
    let previous: CatalogVersion | undefined;
    for (const java of JAVA_VERSIONS.filter((java) => Number(java) > Number(cap))) {
      const found = resolveBuild(newestFirst, { ...query, java })?.version;
      if (found && found !== previous) options.push(`for Java ${java}: ${found.pluginVersion}`);
      previous = found ?? previous;
    }
  }
  if (query.minecraft) {
    const found = resolveBuild(newestFirst, { ...query, minecraft: undefined })?.version;
    // Issue 39: a build that runs on the version asked was kept out by the Java it guarantees (said above).
    if (found && !supportsMinecraft(found, query.minecraft))
      options.push(`for Minecraft ${describeMinecraft(found)}: ${found.pluginVersion}`);
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
  const chain = [
    ...RUNS_PLUGINS_OF[query.software],
    ...(RUNS_FOLIA_SUPPORTED.includes(query.software) ? ['any marked folia-supported'] : []),
  ];
  const runs = chain.length > 1 ? ` (it runs builds for ${chain.join(', ')})` : '';
  return `${asked}; no version of the plugin runs on ${query.software}${runs}`;
}
