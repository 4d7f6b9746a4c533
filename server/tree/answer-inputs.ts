import { z } from 'zod';
import type { Catalog } from '../versions/catalog.ts';
import { RUNS_FOLIA_SUPPORTED, RUNS_PLUGINS_OF } from '../versions/compat.ts';
import { indexLatest, pickLatest, type LatestIndex } from '../versions/latest.ts';
import type { CatalogVersion } from '../versions/schema.ts';
import { SERVER_SOFTWARE, findSoftware, platformOf } from '../versions/software.ts';
import { JAVA_VERSIONS, runsOnJava } from '../versions/java.ts';
import { OPENAPI_PATH } from '../helpers/openapi-path.ts';
import { findByHash } from '../versions/integrity.ts';
import { VERSION_RULES, type HashAlgorithm } from '../versions/paths.ts';
import { BADGE_RULES } from '../badges/paths.ts';
import { BRAND_RULES } from '../brands/paths.ts';
import { CHART_RULES } from '../charts/paths.ts';
import { isUnderEndpointPrefix } from '../page-paths.ts';
import { PROJECT_RULES } from '../project/paths.ts';
import { matchFirst } from '../http/path-rule.ts';

/**
 * What an API answer is made from, and what changed between two trees' data as the answers read
 * it. The build reuses the previous tree's answers that read no change; a release's delta tree
 * (delta.ts) is the previous tree's answers with this change, which the origin answers live.
 *
 * An answer's inputs are the version objects it may show, each its record and its isLatest: a
 * version's JAR and checksum files, its record alone (a withdrawn version's JAR, also the objects
 * of its softwares' versions on its Java version, one of which is its successor); its own answer by id, its version object and
 * the users (it joins its uploader's profile); a lookup by hash, its version object; a
 * software's latest, JAR and latest badges, the objects of that software's versions
 * (on that Java version when the path names one); its feed, those and the users; a resolve answer,
 * those of each software in its chain that run on its Java (all of them for a 404, which names
 * other Java versions; on Folia and CanvasMC every software's, for foliaSupported builds); an
 * update check, every version object (it names newer builds of any software and Java); the brand images, the brand sources; the document and the example chart,
 * the code alone; anything else under /api/, all of data/.
 */
export const AnswerChanges = z.strictObject({
  /** Versions whose record changed, or that one side lacks. */
  records: z.array(z.string()),
  /** Versions whose object (record and isLatest) changed, or that one side lacks. */
  shown: z.array(z.string()),
  /** Groups (`groupKey`) whose version objects changed. */
  groups: z.array(z.string()),
  brands: z.boolean(),
  users: z.boolean(),
  /** Anything in data/: what the lists and the feed of all read. */
  all: z.boolean(),
});
export type AnswerChanges = z.infer<typeof AnswerChanges>;

/** A software's versions (lowercase name), all or those on one Java version (`=21`) or runnable on it (`<=21`). */
type JavaFilter = { exact: string } | { atMost: string } | undefined;
const groupKey = (software: string, java: JavaFilter) =>
  `${software}|${java === undefined ? '*' : 'exact' in java ? `=${java.exact}` : `<=${java.atMost}`}`;
const GROUP_FILTERS: JavaFilter[] = [
  undefined,
  ...JAVA_VERSIONS.map((java) => ({ exact: java })),
  ...JAVA_VERSIONS.map((java) => ({ atMost: java })),
];

/** One side of the comparison: its versions by id and by software, and what isLatest says of each. */
function catalogSide(versions: readonly CatalogVersion[], latest: LatestIndex) {
  const bySoftware = new Map<string, CatalogVersion[]>();
  for (const version of versions)
    for (const name of version.serverSoftware) {
      const key = name.toLowerCase();
      const list = bySoftware.get(key);
      if (list) list.push(version);
      else bySoftware.set(key, [version]);
    }
  const byId = new Map(versions.map((v) => [v.id, v]));
  // Only a version the index holds is latest for anything.
  const indexed = new Set(latest.values());
  const latestOf = (version: CatalogVersion) =>
    indexed.has(version)
      ? version.serverSoftware.map((software) => pickLatest(latest, software, version.javaVersion) === version).join()
      : '';
  return { byId, latestOf, versionsOf: (software: string) => bySoftware.get(software) ?? [] };
}

/**
 * What changed from `before` (a tree's catalog.json: versions newest first, users, brands; and their
 * latest index when already made) to the new data, as AnswerChanges. A version object the new
 * catalog shares with `before` (a change served from the current tree's catalog, build/build.ts)
 * is its record unchanged, without encoding it: at 10,000 versions that took a release 0.2 s.
 */
export function diffCatalogs(
  before: { versions: readonly CatalogVersion[]; users: unknown; brands: unknown; latest?: LatestIndex },
  after: { catalog: Catalog; brands: unknown },
): AnswerChanges {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const a = catalogSide(before.versions, before.latest ?? indexLatest(before.versions));
  const b = catalogSide(after.catalog.versions, after.catalog.latest);
  const ids = new Set([...a.byId.keys(), ...b.byId.keys()]);
  const records: string[] = [];
  const shown = new Set<string>();
  // A software none of whose versions' objects changed has the same versions in the same order
  // (the order is the records'): its groups are unchanged.
  const touched = new Set<string>();
  for (const id of ids) {
    const [old, now] = [a.byId.get(id), b.byId.get(id)];
    const sameRecord = old !== undefined && now !== undefined && (old === now || same(old, now));
    if (!sameRecord) records.push(id);
    if (sameRecord && a.latestOf(old) === b.latestOf(now)) continue;
    shown.add(id);
    for (const version of [old, now]) for (const name of version?.serverSoftware ?? []) touched.add(name.toLowerCase());
  }
  const groups: string[] = [];
  for (const software of SERVER_SOFTWARE.map((name) => name.toLowerCase()).filter((name) => touched.has(name)))
    for (const java of GROUP_FILTERS) {
      const keep = (v: CatalogVersion) =>
        java === undefined || ('exact' in java ? v.javaVersion === java.exact : runsOnJava(v.javaVersion, java.atMost));
      const [older, newer] = [a.versionsOf(software).filter(keep), b.versionsOf(software).filter(keep)];
      const unchanged =
        older.length === newer.length && newer.every((v, i) => older[i]!.id === v.id && !shown.has(v.id));
      if (!unchanged) groups.push(groupKey(software, java));
    }
  const users = !same(before.users, [...after.catalog.users.values()]);
  const brands = !same(before.brands, after.brands);
  return { records, shown: [...shown], groups, brands, users, all: records.length > 0 || users || brands };
}

/** AnswerChanges as sets, for asking about many paths. */
export type ChangeSets = ReturnType<typeof changeSets>;
export const changeSets = (changes: AnswerChanges) => ({
  records: new Set(changes.records),
  shown: new Set(changes.shown),
  groups: new Set(changes.groups),
  brands: changes.brands,
  users: changes.users,
  all: changes.all,
});

export const isEmptyChange = (changes: AnswerChanges) =>
  !changes.all && changes.shown.length === 0 && changes.groups.length === 0;

/** A version's JAR and its checksum files. */
const VERSION_FILES = [VERSION_RULES.download, VERSION_RULES.sha256, VERSION_RULES.sha512];
/** A software's latest (JSON and plain text) and its JAR, with or without a Java version. */
const SOFTWARE_PATHS = [
  VERSION_RULES.latest,
  VERSION_RULES.latestOnJava,
  VERSION_RULES.latestText,
  VERSION_RULES.latestTextOnJava,
  VERSION_RULES.downloadLatest,
  VERSION_RULES.downloadLatestOnJava,
];
/** A software's latest badge, with or without a Java version: the inputs of its latest answer. */
const LATEST_BADGES = [BADGE_RULES.latest, BADGE_RULES.latestOnJava];
const RESOLVE_PATHS = [
  VERSION_RULES.resolve,
  VERSION_RULES.resolveOnJava,
  VERSION_RULES.downloadResolve,
  VERSION_RULES.downloadResolveOnJava,
];
const BRAND_PATHS = Object.values(BRAND_RULES);
const PROJECT_PATHS = Object.values(PROJECT_RULES);
const onJava = (java: string | undefined): JavaFilter => (java === undefined ? undefined : { exact: java });

/**
 * A resolve answer shows the versions of the softwares its server runs builds for (RUNS_PLUGINS_OF,
 * lowercase) that run on its Java version (when it names one), and no users; undefined for other paths.
 */
export function resolveInputsOf(path: string): { chain: string[]; java: string | undefined } | undefined {
  const match = matchFirst(RESOLVE_PATHS, path);
  const software = findSoftware(match?.software ?? '');
  if (!software) return undefined;
  // Issue 31: Folia and CanvasMC also run any software's build marked foliaSupported.
  const chain = RUNS_FOLIA_SUPPORTED.includes(software) ? SERVER_SOFTWARE : RUNS_PLUGINS_OF[software];
  return { chain: chain.map((name) => name.toLowerCase()), java: match?.java };
}

/**
 * Does the API answer at `path` read a change? `status` gives the answer's as the previous tree
 * holds it (asked of resolve answers alone); `catalog` gives the new data's (asked of lookups by hash alone).
 */
export function readsChange(
  path: string,
  changes: ChangeSets,
  answer: { status: () => number; catalog: () => Catalog },
): boolean {
  const file = matchFirst(VERSION_FILES, path);
  if (file) return changes.records.has(file.id!) || readsSuccessorChange(path, file.id!, changes, answer.catalog);
  // A version's own answer is its object (record and isLatest) with its uploader's profile, as the list shows it.
  const own = VERSION_RULES.version.match(path);
  if (own) return changes.shown.has(own.id) || changes.users;
  const byHash = VERSION_RULES.byHash.match(path);
  if (byHash) {
    const version = findByHash(answer.catalog(), byHash.algorithm as HashAlgorithm, byHash.hash);
    return version === undefined || changes.shown.has(version.id);
  }
  const resolve = resolveInputsOf(path);
  if (resolve) {
    // A 404 names what other Java versions would get: it reads them all.
    const java = answer.status() === 404 || resolve.java === undefined ? undefined : { atMost: resolve.java };
    return resolve.chain.some((software) => changes.groups.has(groupKey(software, java)));
  }
  // Issue 31: an update check names newer builds of any software of its kind and any Java (newerElsewhere).
  const check = VERSION_RULES.updateCheck.match(path);
  if (check) return readsPlatformChange(check.software, changes);
  // The project's answers read data/project.json alone, whose change changes the answers' code digest (build.ts).
  if (path === OPENAPI_PATH || CHART_RULES.example.match(path) || matchFirst(PROJECT_PATHS, path)) return false;
  if (matchFirst(BRAND_PATHS, path)) return changes.brands;
  const software = matchFirst(SOFTWARE_PATHS, path);
  if (software) return changes.groups.has(groupKey(software.software!, onJava(software.java)));
  const badge = matchFirst(LATEST_BADGES, path);
  if (badge) return changes.groups.has(groupKey(badge.serverSoftware!, onJava(badge.javaVersion)));
  const feed = VERSION_RULES.softwareFeed.match(path)?.software;
  if (feed) return changes.users || changes.groups.has(groupKey(feed, undefined));
  return changes.all;
}

/** Does a change touch a software of the same kind (server, proxy, Quilt) as `software`? */
function readsPlatformChange(software: string, changes: ChangeSets): boolean {
  const server = findSoftware(software);
  if (!server) return changes.groups.size > 0;
  const platform = platformOf(server);
  for (const key of changes.groups) {
    const changed = findSoftware(key.slice(0, key.indexOf('|')));
    if (changed && platformOf(changed) === platform) return true;
  }
  return false;
}

/**
 * Issue 29: a withdrawn version's download links to its successor (successorOf), the latest of its
 * channel among its softwares' versions on its Java version: it reads those groups too.
 */
function readsSuccessorChange(path: string, id: string, changes: ChangeSets, catalog: () => Catalog): boolean {
  if (!VERSION_RULES.download.match(path)) return false;
  const version = catalog().byId.get(id);
  if (!version?.withdrawn) return false;
  const java = onJava(version.javaVersion);
  return version.serverSoftware.some((software) => changes.groups.has(groupKey(software.toLowerCase(), java)));
}

/** A page of the human site (not an API answer or a brand image): a release's delta tree carries the previous site's. */
export const isSitePath = (path: string) => !isUnderEndpointPrefix(path);
