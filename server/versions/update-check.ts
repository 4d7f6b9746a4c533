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
    versions
      .filter(
        (v) =>
          v.javaVersion === java &&
          v.serverSoftware.includes(software) &&
          channelsShowing(channelOf(v)).includes(channel) &&
          semver.gt(v.pluginVersion, current) &&
          semver.lte(v.pluginVersion, latest.pluginVersion),
      )
      .map((v) => v.pluginVersion),
  );
  return { status: 'outdated', behind: newer.size };
}

/** A semantic version as written, build metadata allowed: semver itself would also take `v1.2.0`, `=1.2.0` and spaces. */
function isSemVer(text: string): boolean {
  return /^\d\S*$/.test(text) && semver.valid(text) !== null;
}
