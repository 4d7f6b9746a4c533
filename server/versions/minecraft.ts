import semver from 'semver';

/**
 * Minecraft versions a build runs on (issue 15). A record keeps SPEC 2.1's `minecraftVersion` (the
 * highest it supports) and may add `minecraftVersions`, inclusive ranges `{from, to}`; a record
 * without them supports exactly its `minecraftVersion`, and one without either (a proxy build)
 * states no game version, so no Minecraft version rules it out.
 */
export type MinecraftRange = { from: string; to: string };

/** A game version as a server reports it: `1.21` or `1.21.4`. */
export const MINECRAFT_VERSION = /^\d{1,3}\.\d{1,3}(\.\d{1,3})?$/;
/** A range's upper end may also be `1.21.x`: every patch of that minor version. */
const MINECRAFT_UPPER = /^\d{1,3}\.\d{1,3}(\.(\d{1,3}|x))?$/;

/** `1.21` is `1.21.0` to semver: Minecraft's first release of a minor version has no patch number. */
const toSemver = (version: string) => (version.split('.').length === 2 ? `${version}.0` : version);

/** A range's upper end for semver: `1.21.x` reaches every patch of 1.21 (patch numbers have at most 3 digits). */
const upperBound = (to: string) => (to.endsWith('.x') ? `${to.slice(0, -2)}.999` : toSemver(to));

/** Inclusive at both ends. */
function inRange(version: string, { from, to }: MinecraftRange): boolean {
  const asked = toSemver(version);
  return semver.gte(asked, toSemver(from)) && semver.lte(asked, upperBound(to));
}

/** Is `version` (a release, or a range's upper end such as 1.21.x) after `than`? A snapshot name is after nothing. */
export function isAfterMinecraft(version: string, than: string): boolean {
  return MINECRAFT_UPPER.test(version) && semver.gt(upperBound(version), toSemver(than));
}

/** Does a build with these fields run on `version` (a MINECRAFT_VERSION)? */
export function supportsMinecraft(
  record: { minecraftVersion?: string | undefined; minecraftVersions?: readonly MinecraftRange[] | undefined },
  version: string,
): boolean {
  if (record.minecraftVersions) return record.minecraftVersions.some((range) => inRange(version, range));
  if (record.minecraftVersion === undefined) return true;
  // A stored version that is not a plain release (a snapshot name) matches only itself.
  if (!MINECRAFT_VERSION.test(record.minecraftVersion)) return record.minecraftVersion === version;
  return semver.eq(toSemver(record.minecraftVersion), toSemver(version));
}

/** The highest version a range list reaches: what `minecraftVersion` holds beside `minecraftVersions`. */
export function highestMinecraft(ranges: readonly MinecraftRange[]): string {
  return ranges.reduce((best, range) => (semver.gt(upperBound(range.to), upperBound(best.to)) ? range : best)).to;
}

/** Ranges as people write them: `1.20.6-1.21.4`, `1.21.x`, `1.21.4`, joined by commas. */
export function describeMinecraft(record: {
  minecraftVersion?: string | undefined;
  minecraftVersions?: readonly MinecraftRange[] | undefined;
}): string {
  if (!record.minecraftVersions) return record.minecraftVersion ?? 'any';
  return record.minecraftVersions
    .map(({ from, to }) => (from === to || `${from}.x` === to ? to : `${from}-${to}`))
    .join(', ');
}

/**
 * `--minecraft` of `depot release`: a comma list of versions (`1.21.1`), ranges (`1.20.6-1.21.4`)
 * and minor versions (`1.21.x`). A string on failure: the reason, to follow the option's name.
 */
export function parseMinecraftList(text: string): MinecraftRange[] | string {
  const ranges: MinecraftRange[] = [];
  const items = text.split(',').map((item) => item.trim());
  if (items.length > 32) return 'lists more than 32 versions or ranges';
  for (const item of items) {
    const [from, to, extra] = item.split('-');
    if (extra !== undefined || from === undefined)
      return `${JSON.stringify(item)} is not a version, a range or a minor version; write 1.21.4, 1.20.6-1.21.4 or 1.21.x`;
    if (to === undefined && /^\d{1,3}\.\d{1,3}\.x$/.test(from)) {
      ranges.push({ from: from.slice(0, -2), to: from });
      continue;
    }
    const upper = to ?? from;
    if (!MINECRAFT_VERSION.test(from) || !MINECRAFT_UPPER.test(upper))
      return `${JSON.stringify(item)} is not a version, a range or a minor version; write 1.21.4, 1.20.6-1.21.4 or 1.21.x`;
    if (semver.gt(toSemver(from), upperBound(upper)))
      return `${JSON.stringify(item)} runs backwards; write the lower version first`;
    ranges.push({ from, to: upper });
  }
  return ranges;
}

/** A range list is well formed: each `from` a version, each `to` a version or `.x`, none backwards. */
export function isValidRange({ from, to }: MinecraftRange): boolean {
  return MINECRAFT_VERSION.test(from) && MINECRAFT_UPPER.test(to) && semver.lte(toSemver(from), upperBound(to));
}
