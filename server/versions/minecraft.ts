/**
 * Minecraft versions a build runs on (issue 15). A record keeps SPEC 2.1's `minecraftVersion` (the
 * highest it supports) and may add `minecraftVersions`, inclusive ranges `{from, to}`; a record
 * without them supports exactly its `minecraftVersion`, and one without either (a proxy build)
 * states no game version, so no Minecraft version rules it out.
 */
export type MinecraftRange = { from: string; to: string };

/** A game version as a server reports it: `1.21`, `1.21.4`, and since Mojang's year numbering (issue 39) `26.1`, `26.1.1`. */
const MINECRAFT_VERSION = /^\d{1,3}\.\d{1,3}(\.\d{1,3})?$/;
/** A range's upper end may also be `1.21.x`: every patch of that minor version. */
const MINECRAFT_UPPER = /^\d{1,3}\.\d{1,3}(\.(\d{1,3}|x))?$/;

/**
 * Issue 39: a pre-release of a year-numbered version, named as Mojang names them from 26.1 on
 * (`26.2-snapshot-1`, `26.2-pre-1`, `26.2-rc-1`). Older names (`24w14a`, `1.21.5-pre1`) have no
 * order and stay names that match only themselves.
 */
const PRE_RELEASE_SOURCE = String.raw`(?:2[6-9]|[3-9]\d|[1-9]\d{2})\.\d{1,3}(?:\.\d{1,3})?-(?:snapshot|pre|rc)-\d{1,3}`;
const MINECRAFT_PRE_RELEASE = new RegExp(`^${PRE_RELEASE_SOURCE}$`);

/** What a server may ask with `?minecraft=` (and Modrinth's `game_versions`): a release, or a 26.x pre-release. */
export const MINECRAFT_NAME = new RegExp(`^(?:${MINECRAFT_VERSION.source.slice(1, -1)}|${PRE_RELEASE_SOURCE})$`);

/** A pre-release orders before its release: snapshot, then pre, then rc, then the release itself. */
const STAGES = ['snapshot', 'pre', 'rc', 'release'] as const;
/** `1.21.x` as a range's end reaches every patch of 1.21 (patch numbers have at most 3 digits). */
const EVERY_PATCH = 999;

/** [major, minor, patch, stage, number]: `1.21` is 1.21.0, Minecraft's first release of a minor version having no patch number. */
type OrderKey = readonly [number, number, number, number, number];

/** The order of a release, a `.x` upper end or a 26.x pre-release (each checked by its pattern first). */
function orderKey(version: string): OrderKey {
  const [numbers = '', stage = 'release', n = '0'] = version.split('-');
  const [major = 0, minor = 0, patch = 0] = numbers
    .split('.')
    .map((part) => (part === 'x' ? EVERY_PATCH : Number(part)));
  return [major, minor, patch, STAGES.indexOf(stage as (typeof STAGES)[number]), Number(n)];
}

/** Negative, zero or positive as `a` orders before, with or after `b`. */
function compareKeys(a: OrderKey, b: OrderKey): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

const compareMinecraft = (a: string, b: string) => compareKeys(orderKey(a), orderKey(b));

/** Is `version` one of the names that have an order: a release, a `.x` upper end, a 26.x pre-release? */
const isOrdered = (version: string) => MINECRAFT_UPPER.test(version) || MINECRAFT_PRE_RELEASE.test(version);

/** The release a 26.x pre-release leads to (`26.2-rc-1` -> `26.2`); a release is its own. */
export const releaseOf = (version: string) => version.split('-')[0]!;

/**
 * Inclusive at both ends. Issue 39: a pre-release is in no range of releases: only a build that
 * names it (a range from it to itself, as a list such as `--minecraft 26.1.x,26.2-snapshot-1`
 * stores it; alone it is `minecraftVersion`) runs on it.
 */
function inRange(version: string, { from, to }: MinecraftRange): boolean {
  if (MINECRAFT_PRE_RELEASE.test(version)) return from === version && to === version;
  return compareMinecraft(version, from) >= 0 && compareMinecraft(version, to) <= 0;
}

/**
 * Is `version` (a release, a range's upper end such as 1.21.x, or a 26.x pre-release) after
 * `than`? A name of no order (`24w14a`) is after nothing.
 */
export function isAfterMinecraft(version: string, than: string): boolean {
  return isOrdered(version) && compareMinecraft(version, than) > 0;
}

/** Does a build with these fields run on `version` (a MINECRAFT_NAME)? */
export function supportsMinecraft(
  record: { minecraftVersion?: string | undefined; minecraftVersions?: readonly MinecraftRange[] | undefined },
  version: string,
): boolean {
  if (record.minecraftVersions) return record.minecraftVersions.some((range) => inRange(version, range));
  if (record.minecraftVersion === undefined) return true;
  // A stored version that is not a plain release (a snapshot name) matches only itself.
  if (!MINECRAFT_VERSION.test(record.minecraftVersion)) return record.minecraftVersion === version;
  return MINECRAFT_VERSION.test(version) && compareMinecraft(record.minecraftVersion, version) === 0;
}

/** The highest version a range list reaches: what `minecraftVersion` holds beside `minecraftVersions`. */
export function highestMinecraft(ranges: readonly MinecraftRange[]): string {
  return ranges.reduce((best, range) => (compareMinecraft(range.to, best.to) > 0 ? range : best)).to;
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

/** Text `--minecraft` reads as a list of versions and ranges, not as one name kept as written (MinecraftOption). */
export const isMinecraftListText = (text: string) => /^[\d.x,\s-]+$/.test(text) || /-(snapshot|pre|rc)-\d/.test(text);

const NOT_A_VERSION =
  'is not a version, a range or a minor version; write 1.21.4, 1.20.6-1.21.4 or 1.21.x (also 26.1.1, 1.21.10-26.1.x)';

/**
 * `--minecraft` of `depot release`: a comma list of versions (`1.21.1`, `26.1.1`), ranges
 * (`1.20.6-1.21.4`, `1.21.10-26.1.x`), minor versions (`1.21.x`) and 26.x pre-releases
 * (`26.2-snapshot-1`, each standing alone). A string on failure: the reason, to follow the option's name.
 */
export function parseMinecraftList(text: string): MinecraftRange[] | string {
  const ranges: MinecraftRange[] = [];
  const items = text.split(',').map((item) => item.trim());
  if (items.length > 32) return 'lists more than 32 versions or ranges';
  for (const item of items) {
    if (MINECRAFT_PRE_RELEASE.test(item)) {
      ranges.push({ from: item, to: item });
      continue;
    }
    if (/-(snapshot|pre|rc)-/.test(item))
      return `${JSON.stringify(item)} is not a 26.x pre-release alone: a pre-release (26.2-snapshot-1, 26.2-pre-1, 26.2-rc-1) is never a range's end; list it beside the range, such as 26.1.x,26.2-snapshot-1`;
    const [from, to, extra] = item.split('-');
    if (extra !== undefined || from === undefined) return `${JSON.stringify(item)} ${NOT_A_VERSION}`;
    if (to === undefined && /^\d{1,3}\.\d{1,3}\.x$/.test(from)) {
      ranges.push({ from: from.slice(0, -2), to: from });
      continue;
    }
    const upper = to ?? from;
    if (!MINECRAFT_VERSION.test(from) || !MINECRAFT_UPPER.test(upper))
      return `${JSON.stringify(item)} ${NOT_A_VERSION}`;
    if (compareMinecraft(from, upper) > 0)
      return `${JSON.stringify(item)} runs backwards; write the lower version first`;
    ranges.push({ from, to: upper });
  }
  return ranges;
}

/**
 * A range list is well formed: each `from` a version, each `to` a version or `.x`, none
 * backwards; or a 26.x pre-release from and to itself.
 */
export function isValidRange({ from, to }: MinecraftRange): boolean {
  if (MINECRAFT_PRE_RELEASE.test(from) || MINECRAFT_PRE_RELEASE.test(to)) return from === to;
  return MINECRAFT_VERSION.test(from) && MINECRAFT_UPPER.test(to) && compareMinecraft(from, to) <= 0;
}
