import { runsOnJava } from '../server/versions/compat.ts';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { OPENAPI_PATH } from '../server/openapi.ts';
import { parseFile, readJsonFile } from '../server/data-files.ts';
import { ROOT, digestSources } from './source-files.ts';
import { FILES_DIR, Manifest, type RouteEntry } from '../server/tree.ts';
import type { BrandSourceRecord } from '../server/brands/sources.ts';
import type { Catalog } from '../server/versions/catalog.ts';
import type { CatalogVersion, UserProfile } from '../server/versions/schema.ts';
import { findByHash, type HashAlgorithm } from '../server/versions/integrity.ts';
import { resolveInputsOf } from './resolve-paths.ts';

/** What an answer's bytes are made by besides data/: the server, the build, and the packages they run on. */
const CODE_INPUTS = [join(ROOT, 'server'), join(ROOT, 'build'), join(ROOT, 'package-lock.json')];

/** Beside a tree's manifest: what the build needs to reuse the tree's answers in the next build. */
export const BUILD_RECORD = 'build.json';

export const BuildRecord = z.strictObject({
  /** Digest of the code that rendered the answers (`answerCodeDigest`) and of the settings they print: other code or settings, no reuse. */
  code: z.string(),
  /** The site's key (sources, catalog, document) and its routes; null without a site. */
  site: z.strictObject({ key: z.string(), paths: z.array(z.string()) }).nullable(),
});
export type BuildRecord = z.infer<typeof BuildRecord>;

/** The inputs of the previous tree's answers, as its catalog.json holds them: compared as JSON text, never served. */
const PreviousCatalog = z.object({
  versions: z.array(z.looseObject({ id: z.string(), serverSoftware: z.array(z.string()) })),
  users: z.array(z.unknown()),
  brands: z.array(z.unknown()),
});

export type PreviousTree = {
  dir: string;
  routes: Record<string, RouteEntry>;
  record: BuildRecord;
  /** An unchanged answer of this tree for `path`, when its inputs are the same as the new data's. */
  unchanged: (path: string) => RouteEntry | undefined;
};

const DOWNLOAD_PREFIX = '/api/plugin-versions/download/';
const SIDECAR = /\.sha(?:256|512)$/;
const BY_HASH = /^\/api\/plugin-versions\/by-hash\/(sha256|sha512)\/([0-9a-f]+)$/;
const SOFTWARE_PATH = /^\/api\/plugin-versions\/(?:latest|download\/latest|update-check)\/([a-z]+)(?:[/?]|$)/;
const SOFTWARE_FEED = /^\/api\/plugin-versions\/feed\/([a-z]+)\.atom$/;

/**
 * The versions a software's answers depend on: its own, and those of every software they also run
 * on, since a version's `isLatest` says, per software it runs on, whether it is that software's latest.
 */
function versionsShownWith<V extends { serverSoftware: readonly string[] }>(
  software: string,
  versions: readonly V[],
): V[] {
  const touches = (v: V, names: ReadonlySet<string>) => v.serverSoftware.some((name) => names.has(name.toLowerCase()));
  const own = new Set([software]);
  const related = new Set(
    versions.filter((v) => touches(v, own)).flatMap((v) => v.serverSoftware.map((n) => n.toLowerCase())),
  );
  related.add(software);
  return versions.filter((v) => touches(v, related));
}

/** A digest of the code behind the answers: a tree built by other code is not reused. */
export function answerCodeDigest(): Promise<string> {
  return digestSources('answers', CODE_INPUTS);
}

/**
 * The current tree with what of it the next build may reuse: its site until the new one is built,
 * and, if built by the same code, each answer whose data did not change (a version's JAR answer: that record; the
 * brand images: the brand sources; the document and the example chart: the code alone; a
 * software's latest and update checks: the versions `versionsShownWith` it, and its feed those
 * and the users; a resolve answer: those of each software in its chain that run on its Java; a
 * checksum sidecar: its record; a lookup by hash: its record and its softwares' versions;
 * anything else: all of data/). A tree without a build record, or unreadable, reuses nothing.
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
    const manifestFile = join(dir, 'manifest.json');
    // Entries as written (zod's output orders an entry's keys by its schema): reused, they give the
    // same manifest text, so the same tree name, as the build that rendered them.
    const raw = await readJsonFile(manifestFile);
    parseFile(Manifest, raw, manifestFile);
    const { routes } = raw as Manifest;
    const catalogFile = join(dir, 'catalog.json');
    const previous = parseFile(PreviousCatalog, await readJsonFile(catalogFile), catalogFile);
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    const usersNow: UserProfile[] = [...next.catalog.users.values()];
    const brandsSame = same(previous.brands, next.brands);
    const usersSame = same(previous.users, usersNow);
    const allSame = brandsSame && usersSame && same(previous.versions, next.catalog.versions);
    const previousRecords = new Map(previous.versions.map((v) => [v.id, v]));
    // Per software: did anything its answers show change? Computed once per software asked.
    const softwareSame = new Map<string, boolean>();
    // With a Java version: only the versions that run on it (a resolve answer for that Java).
    const sameFor = (software: string, java?: string) => {
      const key = `${software}|${java ?? ''}`;
      let known = softwareSame.get(key);
      if (known === undefined) {
        const runs = (v: object) =>
          java === undefined || runsOnJava(String((v as { javaVersion?: unknown }).javaVersion), java);
        known = same(
          versionsShownWith(software, previous.versions).filter(runs),
          versionsShownWith(software, next.catalog.versions).filter(runs),
        );
        softwareSame.set(key, known);
      }
      return known;
    };
    const sameRecord = (version: CatalogVersion) => same(previousRecords.get(version.id), version);
    const unchanged = (path: string): RouteEntry | undefined => {
      const entry = routes[path];
      if (!entry || record.code !== code) return undefined;
      if (path.startsWith(DOWNLOAD_PREFIX)) {
        // A JAR and its checksum sidecars show its record alone.
        const version = next.catalog.byId.get(path.slice(DOWNLOAD_PREFIX.length).replace(SIDECAR, ''));
        if (version) return sameRecord(version) ? entry : undefined;
      }
      // A lookup by hash shows the version object, whose isLatest reads its softwares' versions.
      const byHash = BY_HASH.exec(path);
      const found = byHash && findByHash(next.catalog, byHash[1] as HashAlgorithm, byHash[2]!);
      if (found)
        return sameRecord(found) && found.serverSoftware.every((name) => sameFor(name.toLowerCase()))
          ? entry
          : undefined;
      const resolve = resolveInputsOf(path);
      if (resolve) {
        // A 404 names what other Java versions would get: it reads them all.
        const java = entry.status === 404 ? undefined : resolve.java;
        return resolve.chain.every((software) => sameFor(software, java)) ? entry : undefined;
      }
      if (path === OPENAPI_PATH || path === '/api/charts/example') return entry;
      if (path.startsWith('/api/image/brand') || path.startsWith('/brand/')) return brandsSame ? entry : undefined;
      // A software's latest and update checks show its versions; its feed, their authors' names too.
      const software = SOFTWARE_PATH.exec(path)?.[1];
      if (software) return sameFor(software) ? entry : undefined;
      const feed = SOFTWARE_FEED.exec(path)?.[1];
      if (feed) return usersSame && sameFor(feed) ? entry : undefined;
      return allSame ? entry : undefined;
    };
    return { dir, routes, record, unchanged };
  } catch {
    return null;
  }
}
