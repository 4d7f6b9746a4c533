import semver from 'semver';
import { channelOf, channelsShowing, type Channel } from './channels.ts';
import type { CatalogVersion, PluginVersionRecord } from './schema.ts';
import type { ServerSoftware } from './software.ts';
import type { JavaVersion } from './java.ts';

export type LatestIndex = ReadonlyMap<string, CatalogVersion>;

/**
 * SPEC 2.4.2: the most recent createdAt wins. Ties are broken by the higher plugin version, then by
 * the higher id, so the same records always pick the same latest.
 */
export function compareNewestFirst(a: PluginVersionRecord, b: PluginVersionRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  const byVersion = semver.rcompare(a.pluginVersion, b.pluginVersion);
  if (byVersion !== 0) return byVersion;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function latestKey(channel: Channel, software: ServerSoftware, java?: JavaVersion): string {
  return java ? `${channel}|${software}|${java}` : `${channel}|${software}`;
}

/**
 * The latest version per channel and software (+ Java version), from records sorted newest first.
 * A channel's latest is chosen among its own versions and those of the more stable channels, never
 * a withdrawn one.
 */
export function indexLatest(newestFirst: readonly CatalogVersion[]): LatestIndex {
  const index = new Map<string, CatalogVersion>();
  // A newer version of the same channel, software and Java version has set every key this one
  // would: at 10,000 versions, most are skipped after one lookup.
  const seen = new Set<string>();
  for (const version of newestFirst) {
    // Issue 29: a withdrawn version is latest for nothing; the next one that qualifies is.
    if (version.withdrawn) continue;
    const channel = channelOf(version);
    for (const software of version.serverSoftware) {
      const group = latestKey(channel, software, version.javaVersion);
      if (seen.has(group)) continue;
      seen.add(group);
      for (const shown of channelsShowing(channel)) {
        for (const key of [latestKey(shown, software), latestKey(shown, software, version.javaVersion)]) {
          if (!index.has(key)) index.set(key, version);
        }
      }
    }
  }
  return index;
}

/**
 * SPEC 2.4.4: without a Java version the newest for the software wins, whatever its Java version.
 * Only the release channel unless the client asks for another.
 */
export function pickLatest(
  index: LatestIndex,
  software: ServerSoftware,
  java?: JavaVersion,
  channel: Channel = 'release',
) {
  return index.get(latestKey(channel, software, java));
}

/**
 * SPEC 2.4.3: per supported software, is this the latest for that software and its own Java
 * version? Read on the release channel, so a beta or alpha version is never latest here.
 */
export function isLatestMap(index: LatestIndex, version: PluginVersionRecord): Record<string, boolean> {
  return Object.fromEntries(
    version.serverSoftware.map((software) => [software, pickLatest(index, software, version.javaVersion) === version]),
  );
}

/**
 * Issue 29: the version a withdrawn one's users move to: the latest of its own channel, Java version
 * and first software that has one (a newer or an older build); undefined when none does.
 */
export function successorOf(index: LatestIndex, version: PluginVersionRecord): CatalogVersion | undefined {
  for (const software of version.serverSoftware) {
    const found = pickLatest(index, software, version.javaVersion, channelOf(version));
    if (found) return found;
  }
  return undefined;
}
