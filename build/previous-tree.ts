import { readFile, lstat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { sha256Hex } from '../server/digest.ts';
import { OPENAPI_PATH } from '../server/openapi.ts';
import { readJsonFile } from '../server/data-files.ts';
import { ROOT, digestSources } from './source-files.ts';
import { FILES_DIR, type CatalogFile, type RouteEntry } from '../server/tree.ts';
import { splitManifest } from '../server/manifest-text.ts';
import type { BrandSourceRecord } from '../server/brands/sources.ts';
import type { Catalog, DataFileMemory } from '../server/versions/catalog.ts';
import { runsOnJava } from '../server/versions/compat.ts';
import { indexLatest, isLatestMap, type LatestIndex } from '../server/versions/latest.ts';
import type { CatalogVersion } from '../server/versions/schema.ts';
import { findByHash, type HashAlgorithm } from '../server/versions/integrity.ts';
import { resolveInputsOf } from './resolve-paths.ts';

/** What an answer's bytes are made by besides data/: the server, the build, and the packages they run on. */
const CODE_INPUTS = [join(ROOT, 'server'), join(ROOT, 'build'), join(ROOT, 'package-lock.json')];

/** Beside a tree's manifest: what the build needs to reuse the tree's answers in the next build. */
export const BUILD_RECORD = 'build.json';

export const BuildRecord = z.strictObject({
  /** Digest of the code that rendered the answers (`answerCodeDigest`) and of the settings they print: other code or settings, no reuse. */
  code: z.string(),
  /** sha256 of the tree's catalog.json: the next build reads that file back as written, unchanged. */
  catalog: z.string().regex(/^[0-9a-f]{64}$/),
  /** The site's key (sources, catalog, document) and its routes; null without a site. */
  site: z.strictObject({ key: z.string(), paths: z.array(z.string()) }).nullable(),
});
export type BuildRecord = z.infer<typeof BuildRecord>;

export type PreviousTree = {
  dir: string;
  /** Each route's entry as its manifest line holds it: the next manifest takes it as written. */
  routes: ReadonlyMap<string, string>;
  record: BuildRecord;
  /** The entry (as text) of this tree for `path`, when the answer's inputs are the same as the new data's. */
  unchanged: (path: string) => string | undefined;
};

const VERSION_FILE = /^\/api\/plugin-versions\/download\/(plugin-[^/.]+)(?:\.sha(?:256|512))?$/;
const BY_HASH = /^\/api\/plugin-versions\/by-hash\/(sha256|sha512)\/([0-9a-f]+)$/;
/** A software's latest, its JAR and its update checks, with or without a Java version. */
const SOFTWARE_PATH =
  /^\/api\/plugin-versions\/(?:latest|download\/latest|update-check)\/([a-z]+)(?:\/(8|11|17|21))?(?:[/?]|$)/;
const SOFTWARE_FEED = /^\/api\/plugin-versions\/feed\/([a-z]+)\.atom$/;
/** A software's latest badge, with or without a Java version: the inputs of its latest answer. */
const LATEST_BADGE = /^\/api\/badges\/latest\/([a-z]+)(?:\/(8|11|17|21))?\.(?:svg|json)$/;

/** A digest of the code behind the answers: a tree built by other code is not reused. */
export function answerCodeDigest(memory?: DataFileMemory): Promise<string> {
  return digestSources('answers', CODE_INPUTS, memory);
}

/**
 * One side of the comparison (the previous tree's records or the new ones): each version as the
 * answers show it, and which versions each software's answers read, so that a group of versions
 * is compared once whatever number of answers read it.
 */
function catalogSide(versions: readonly CatalogVersion[], latest: LatestIndex) {
  const record = new Map<string, string>();
  const shown = new Map<string, string>();
  const recordOf = (version: CatalogVersion) => {
    let text = record.get(version.id);
    if (text === undefined) record.set(version.id, (text = JSON.stringify(version)));
    return text;
  };
  // A version object is its record and, per software, whether it is that software's latest (SPEC 2.4.3).
  const shownOf = (version: CatalogVersion) => {
    let text = shown.get(version.id);
    if (text === undefined)
      shown.set(version.id, (text = recordOf(version) + JSON.stringify(isLatestMap(latest, version))));
    return text;
  };
  const bySoftware = new Map<string, CatalogVersion[]>();
  for (const version of versions)
    for (const name of version.serverSoftware) {
      const key = name.toLowerCase();
      const list = bySoftware.get(key);
      if (list) list.push(version);
      else bySoftware.set(key, [version]);
    }
  const byId = new Map(versions.map((v) => [v.id, v]));
  return { byId, recordOf, shownOf, versionsOf: (software: string) => bySoftware.get(software) ?? [] };
}

/**
 * The current tree with what of it the next build may reuse: its site until the new one is built,
 * and, if built by the same code, each answer whose inputs did not change. An answer's inputs are
 * the version objects it may show, each its record and its isLatest: a version's JAR and checksum
 * files, its record alone; a lookup by hash, its version object; a software's latest, JAR, update
 * checks and latest badges, the objects of that software's versions (on that Java version when the
 * path names one); its feed, those and the users; a resolve answer, those of each software in its chain that
 * run on its Java (all of them for a 404, which names other Java versions); the brand images, the
 * brand sources; the document and the example chart, the code alone; anything else, all of data/.
 * A tree without a build record, or whose manifest or catalog is not as the build wrote it, reuses nothing.
 */
export async function readPreviousTree(
  dir: string | null,
  code: string,
  next: { catalog: Catalog; brands: readonly BrandSourceRecord[] },
): Promise<PreviousTree | null> {
  if (!dir) return null;
  try {
    // A tree of the layout before dist/files: its files are not in the store, so nothing is reused.
    if (!(await lstat(join(dir, FILES_DIR))).isSymbolicLink()) return null;
    const record = BuildRecord.parse(await readJsonFile(join(dir, BUILD_RECORD)));
    const [manifestBytes, catalogBytes] = await Promise.all(
      ['manifest.json', 'catalog.json'].map((name) => readFile(join(dir, name))),
    );
    // Both files are the build's own output, checked by their digests rather than parsed with zod
    // (54,000 routes at 10,000 versions cost a release 0.2 s): a tree is named by its manifest's digest.
    // Hashed as read: hashing the decoded text would encode its megabytes again.
    if (sha256Hex(manifestBytes!).slice(0, 20) !== basename(dir) || sha256Hex(catalogBytes!) !== record.catalog)
      return null;
    const [manifestText, catalogText] = [manifestBytes!.toString('utf8'), catalogBytes!.toString('utf8')];
    const routes = new Map<string, string>();
    for (const [path, entry] of splitManifest(manifestText, dir).routes)
      routes.set(path, typeof entry === 'string' ? entry : JSON.stringify(entry));
    const previous = JSON.parse(catalogText) as CatalogFile;
    if (record.code !== code) return { dir, routes, record, unchanged: () => undefined };

    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    const brandsSame = same(previous.brands, next.brands);
    const usersSame = same(previous.users, [...next.catalog.users.values()]);
    // catalog.json lists the versions newest first, as the catalog it was written from.
    const before = catalogSide(previous.versions, indexLatest(previous.versions));
    const after = catalogSide(next.catalog.versions, next.catalog.latest);
    const allSame =
      brandsSame &&
      usersSame &&
      previous.versions.length === next.catalog.versions.length &&
      next.catalog.versions.every((v, i) => before.recordOf(previous.versions[i]!) === after.recordOf(v));

    const sameRecord = (id: string) => {
      const [a, b] = [before.byId.get(id), after.byId.get(id)];
      return a !== undefined && b !== undefined && before.recordOf(a) === after.recordOf(b);
    };
    const sameShown = (version: CatalogVersion) => {
      const earlier = before.byId.get(version.id);
      return earlier !== undefined && before.shownOf(earlier) === after.shownOf(version);
    };
    // Per software and Java filter: are the version objects its answers may show the same? Computed once.
    const groups = new Map<string, boolean>();
    const sameGroup = (software: string, java?: { exact: string } | { atMost: string }) => {
      const key = `${software}|${JSON.stringify(java ?? null)}`;
      let known = groups.get(key);
      if (known === undefined) {
        const keep = (v: CatalogVersion) =>
          java === undefined ||
          ('exact' in java ? v.javaVersion === java.exact : runsOnJava(v.javaVersion, java.atMost));
        const [a, b] = [before.versionsOf(software).filter(keep), after.versionsOf(software).filter(keep)];
        known = a.length === b.length && b.every((v, i) => before.shownOf(a[i]!) === after.shownOf(v));
        groups.set(key, known);
      }
      return known;
    };

    const inputsSame = (path: string, entry: string): boolean => {
      const file = VERSION_FILE.exec(path);
      if (file) return sameRecord(file[1]!);
      const byHash = BY_HASH.exec(path);
      if (byHash) {
        const found = findByHash(next.catalog, byHash[1] as HashAlgorithm, byHash[2]!);
        return found !== undefined && sameShown(found);
      }
      const resolve = resolveInputsOf(path);
      if (resolve) {
        // A 404 names what other Java versions would get: it reads them all.
        const notFound = (JSON.parse(entry) as RouteEntry).status === 404;
        const java = notFound || resolve.java === undefined ? undefined : { atMost: resolve.java };
        return resolve.chain.every((software) => sameGroup(software, java));
      }
      if (path === OPENAPI_PATH || path === '/api/charts/example') return true;
      if (path.startsWith('/api/image/brand') || path.startsWith('/brand/')) return brandsSame;
      const software = SOFTWARE_PATH.exec(path) ?? LATEST_BADGE.exec(path);
      if (software) return sameGroup(software[1]!, software[2] === undefined ? undefined : { exact: software[2] });
      const feed = SOFTWARE_FEED.exec(path)?.[1];
      if (feed) return usersSame && sameGroup(feed);
      return allSame;
    };
    const unchanged = (path: string): string | undefined => {
      const entry = routes.get(path);
      return entry && inputsSame(path, entry) ? entry : undefined;
    };
    return { dir, routes, record, unchanged };
  } catch {
    return null;
  }
}
