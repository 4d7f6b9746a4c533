import semver, { SemVer } from 'semver';
import type { PluginVersionRecord } from './schema.ts';

/** A catalog's versions by plugin version, highest first, each parsed once. */
type Ranked<V> = { versions: readonly V[]; parsed: readonly SemVer[] };

/**
 * Per catalog (its versions array, newest first), the same versions ranked by plugin version:
 * an update check asks about the few above its current version, and scanning all of them, parsing
 * each version string on every comparison, cost 20 ms per answer at 10,000 versions (a release
 * renders 680 update checks again).
 */
const RANKED = new WeakMap<readonly PluginVersionRecord[], Ranked<PluginVersionRecord>>();

function rank<V extends PluginVersionRecord>(versions: readonly V[]): Ranked<V> {
  let ranked = RANKED.get(versions) as Ranked<V> | undefined;
  if (!ranked) {
    const parsed = versions.map((version, at) => ({ version, at, semver: new SemVer(version.pluginVersion) }));
    // Equal plugin versions (build metadata aside) keep the catalog's order, newest first.
    parsed.sort((a, b) => semver.rcompare(a.semver, b.semver) || a.at - b.at);
    ranked = { versions: parsed.map((entry) => entry.version), parsed: parsed.map((entry) => entry.semver) };
    RANKED.set(versions, ranked);
  }
  return ranked;
}

/**
 * The versions whose plugin version is at most `atMost` and above `above` (or at least `atLeast`),
 * each bound when given, by semantic version (build metadata aside): highest first, versions of
 * equal plugin version in the catalog's order. Bounds must be valid semantic versions.
 */
export function versionsInRange<V extends PluginVersionRecord>(
  versions: readonly V[],
  range: { above?: string; atLeast?: string; atMost?: string },
): readonly V[] {
  const { parsed, versions: ranked } = rank(versions);
  const start = range.atMost === undefined ? 0 : firstIndex(parsed, 'atMost', range.atMost);
  const end =
    range.above !== undefined
      ? firstIndex(parsed, 'atMost', range.above)
      : range.atLeast !== undefined
        ? firstIndex(parsed, 'below', range.atLeast)
        : parsed.length;
  return ranked.slice(start, Math.max(start, end));
}

/** The first index (the list is highest first) whose version is below, or at most, `bound`; the length when none is. */
function firstIndex(parsed: readonly SemVer[], where: 'below' | 'atMost', bound: string): number {
  const version = new SemVer(bound);
  // Below: past every version at least `bound`; at most: past every version above it.
  const skipFrom = where === 'below' ? 0 : 1;
  let [low, high] = [0, parsed.length];
  while (low < high) {
    const middle = (low + high) >> 1;
    if (semver.compare(parsed[middle]!, version) >= skipFrom) low = middle + 1;
    else high = middle;
  }
  return low;
}
