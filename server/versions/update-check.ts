import semver from 'semver';
import { channelOf, channelsShowing, type Channel } from './channels.ts';
import type { PluginVersionRecord, UPDATE_STATUSES } from './schema.ts';
import type { JavaVersion, ServerSoftware } from './software.ts';

export type UpdateStatus = (typeof UPDATE_STATUSES)[number];

/** What an update check asks about: the combination and channel whose latest is `latest`. */
export type UpdateQuestion = {
  software: ServerSoftware;
  java: JavaVersion;
  channel: Channel;
  current: string;
  latest: PluginVersionRecord;
};

/**
 * Where `current` stands against the latest of its software, Java version and channel, by semantic
 * version: a version the depot never released (a dev build such as 1.4.1-SNAPSHOT) is compared like
 * any other. `behind` counts the distinct plugin versions of the channel newer than current, up to
 * the latest; a current that is not a semantic version cannot be compared (`unknown`, behind null).
 */
export function checkForUpdate(
  versions: readonly PluginVersionRecord[],
  question: UpdateQuestion,
): { status: UpdateStatus; behind: number | null } {
  const { software, java, channel, current, latest } = question;
  if (!isSemVer(current)) return { status: 'unknown', behind: null };
  const order = semver.compare(current, latest.pluginVersion);
  if (order === 0) return { status: 'latest', behind: 0 };
  if (order > 0) return { status: 'ahead', behind: 0 };
  const newer = new Set(
    versionsFor(versions, software, java)
      .filter(
        (v) =>
          !v.withdrawn &&
          channelsShowing(channelOf(v)).includes(channel) &&
          semver.gt(v.pluginVersion, current) &&
          semver.lte(v.pluginVersion, latest.pluginVersion),
      )
      .map((v) => v.pluginVersion),
  );
  return { status: 'outdated', behind: newer.size };
}

/**
 * Issue 29: why the version a server runs was withdrawn, when the depot's builds of `current` for
 * this software and Java version all were (the newest one's reason); undefined when one of them
 * stands, or the depot never released `current` there.
 */
export function withdrawalOf(
  versions: readonly PluginVersionRecord[],
  question: Pick<UpdateQuestion, 'software' | 'java' | 'current'>,
): { reason: string } | undefined {
  const builds = versionsFor(versions, question.software, question.java).filter(
    (v) => v.pluginVersion === question.current,
  );
  const first = builds[0];
  if (!first?.withdrawn || builds.some((v) => !v.withdrawn)) return undefined;
  return { reason: first.withdrawn.reason };
}

// Per list of versions (a tree's catalog), its versions by software and Java version: a build asks
// hundreds of update checks of one catalog, each of which would otherwise scan every version.
const indexes = new WeakMap<readonly PluginVersionRecord[], Map<string, PluginVersionRecord[]>>();

function versionsFor(versions: readonly PluginVersionRecord[], software: ServerSoftware, java: JavaVersion) {
  let index = indexes.get(versions);
  if (!index) {
    index = new Map();
    for (const version of versions) {
      for (const name of version.serverSoftware) {
        const key = `${name}|${version.javaVersion}`;
        const list = index.get(key);
        if (list) list.push(version);
        else index.set(key, [version]);
      }
    }
    indexes.set(versions, index);
  }
  return index.get(`${software}|${java}`) ?? [];
}

/** A semantic version as written, build metadata allowed: semver itself would also take `v1.2.0`, `=1.2.0` and spaces. */
function isSemVer(text: string): boolean {
  return /^\d\S*$/.test(text) && semver.valid(text) !== null;
}
