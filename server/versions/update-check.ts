import semver from 'semver';
import { channelOf, channelsShowing } from './channels.ts';
import { runsOnJava } from './java.ts';
import { describeMinecraft, supportsMinecraft } from './minecraft.ts';
import { chainStepOf, runsOnServer, type ServerQuery } from './resolve.ts';
import type { NewerElsewhere, PluginVersionRecord, UPDATE_STATUSES } from './schema.ts';
import { platformOf } from './software.ts';
import { versionsInRange } from './plugin-version-order.ts';
import type { z } from 'zod';

export type UpdateStatus = (typeof UPDATE_STATUSES)[number];
type Newer = z.infer<typeof NewerElsewhere>;

/** What an update check asks about: the server (as resolve reads it), the version it runs, and the build resolve offers it. */
export type UpdateQuestion = ServerQuery & { current: string; latest: PluginVersionRecord };

/**
 * Where `current` stands against the build offered, by semantic version: a version the depot never
 * released (a dev build such as 1.4.1-SNAPSHOT) is compared like any other. `behind` counts the
 * distinct plugin versions the server runs (its chain, Java, Minecraft version and channel) newer
 * than current, up to the offered one; a current that is not a semantic version cannot be compared
 * (`unknown`, behind null).
 */
export function checkForUpdate(
  versions: readonly PluginVersionRecord[],
  question: UpdateQuestion,
): { status: UpdateStatus; behind: number | null } {
  const { current, latest } = question;
  if (!isSemVer(current)) return { status: 'unknown', behind: null };
  const order = semver.compare(current, latest.pluginVersion);
  if (order === 0) return { status: 'latest', behind: 0 };
  if (order > 0) return { status: 'ahead', behind: 0 };
  const newer = new Set<string>();
  for (const v of versionsInRange(versions, { above: current, atMost: latest.pluginVersion })) {
    if (newer.has(v.pluginVersion) || !runsOnServer(v, question) || chainStepOf(v, question) < 0) continue;
    newer.add(v.pluginVersion);
  }
  return { status: 'outdated', behind: newer.size };
}

/**
 * Issue 31: the plugin versions newer than the one offered that this server is not offered, each
 * with what stands in the way: a newer Java, another Minecraft version, or a software of its kind (a
 * game server, a proxy, Quilt) its chain does not take (or ranks after the offered build's). A version with several builds names the one
 * that needs the fewest changes. Never a withdrawn version or one of a channel not asked for; newest first.
 */
export function newerElsewhere(versions: readonly PluginVersionRecord[], question: UpdateQuestion): Newer[] {
  const server = question;
  const offered = chainStepOf(question.latest, question);
  const best = new Map<string, Newer['needs']>();
  // Versions of equal plugin version come in the catalog's order, as they would scanning it all.
  for (const v of versionsInRange(versions, { above: question.latest.pluginVersion })) {
    if (v.withdrawn || !channelsShowing(channelOf(v)).includes(server.channel)) continue;
    if (!v.serverSoftware.some((software) => platformOf(software) === platformOf(server.software))) continue;
    const step = chainStepOf(v, server);
    const needs: Newer['needs'] = {
      ...(server.java !== undefined && !runsOnJava(v.javaVersion, server.java) && { java: v.javaVersion }),
      ...(server.minecraft !== undefined &&
        !supportsMinecraft(v, server.minecraft) && { minecraft: describeMinecraft(v) }),
      ...((step < 0 || step > offered) && { software: [...v.serverSoftware] }),
    };
    const count = Object.keys(needs).length;
    const known = best.get(v.pluginVersion);
    if (count > 0 && (known === undefined || count < Object.keys(known).length)) best.set(v.pluginVersion, needs);
  }
  return [...best.entries()].sort(([a], [b]) => semver.rcompare(a, b)).map(([version, needs]) => ({ version, needs }));
}

/**
 * Issue 29: why the version a server runs was withdrawn, when the depot's builds of `current` that
 * the server runs (its chain, on its Java version) all were (the newest one's reason); undefined
 * when one of them stands, or the depot never released `current` there.
 */
export function withdrawalOf(
  versions: readonly PluginVersionRecord[],
  question: Pick<UpdateQuestion, 'software' | 'java' | 'current'>,
): { reason: string } | undefined {
  const { java, current } = question;
  // A plugin version is written as semver writes it back (SemVer in schema.ts): no other text names one.
  if (semver.valid(current) !== current) return undefined;
  const builds = versionsInRange(versions, { atLeast: current, atMost: current }).filter(
    (v) =>
      v.pluginVersion === current &&
      (java === undefined || runsOnJava(v.javaVersion, java)) &&
      chainStepOf(v, question) >= 0,
  );
  const first = builds[0];
  if (!first?.withdrawn || builds.some((v) => !v.withdrawn)) return undefined;
  return { reason: first.withdrawn.reason };
}

/** A semantic version as written, build metadata allowed: semver itself would also take `v1.2.0`, `=1.2.0` and spaces. */
function isSemVer(text: string): boolean {
  return /^\d\S*$/.test(text) && semver.valid(text) !== null;
}
