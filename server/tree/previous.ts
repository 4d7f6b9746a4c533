import { readFile, lstat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { sha256Hex } from '../helpers/digest.ts';
import { readJsonFile } from '../data-files.ts';
import { FILES_DIR, TREE_NAME, type CatalogFile, type RouteEntry } from './format.ts';
import { splitManifest } from './manifest-text.ts';
import type { BrandSourceRecord } from '../brands/source-record.ts';
import type { Catalog } from '../versions/catalog.ts';
import { changeSets, diffCatalogs, readsChange, type AnswerChanges } from './answer-inputs.ts';

/**
 * A tree as the build wrote it, read back by the next build: what it may reuse (each answer whose
 * inputs did not change, the site until the new one is built), and the base of a delta tree.
 */

/** Beside a tree's manifest: what the build needs to reuse the tree's answers in the next build. */
export const BUILD_RECORD = 'build.json';

export const BuildRecord = z.strictObject({
  /** Digest of the code that rendered the answers (build/source-files.ts `answerCodeDigest`) and of the settings they print: other code or settings, no reuse. */
  code: z.string(),
  /** sha256 of the tree's catalog.json: the next build reads that file back as written, unchanged. */
  catalog: z.string().regex(/^[0-9a-f]{64}$/),
  /**
   * The site's key (sources, catalog, document) and its routes, each with the key of the data its page
   * was rendered from ('' for what the next build does not reuse: scripts, styles, pages that read the
   * whole tree); null without a site.
   */
  site: z.strictObject({ key: z.string(), pages: z.record(z.string(), z.string()) }).nullable(),
  /** A delta tree's base (delta.ts): the tree whose answers it serves, but those that read its changes. */
  base: z.string().regex(TREE_NAME).optional(),
});
export type BuildRecord = z.infer<typeof BuildRecord>;

/** A tree's build record, checked; throws when it has none or one the build did not write. */
export async function readBuildRecord(treeDir: string): Promise<BuildRecord> {
  return BuildRecord.parse(await readJsonFile(join(treeDir, BUILD_RECORD)));
}

export type PreviousTree = {
  /** The current tree, or its base when it is a delta tree. */
  dir: string;
  record: BuildRecord;
  /** The digest of the catalog the current tree serves (the delta tree's own when it is one). */
  servedCatalog: string;
  /** Its JARs' names in dist/files (`<sha256>.jar`). */
  jars: readonly string[];
  /** What changed since this tree, as its answers read it; null when other code built it (nothing is reused). */
  changes: AnswerChanges | null;
  /**
   * Each route's entry as its manifest line holds it (the next manifest takes it as written), read
   * when first asked; empty when the manifest is not as the build wrote it.
   */
  routes: () => Promise<ReadonlyMap<string, string>>;
};

/** A full tree (not a delta tree) as the build wrote it: its record, its catalog.json and its JARs in dist/files. */
export type BuiltTree = { dir: string; record: BuildRecord; catalog: CatalogFile; jars: readonly string[] };

/**
 * A full tree as the build wrote it; null for a delta tree, a tree of the layout before
 * dist/files (its files are not in the store), or one whose catalog is not as written. Its catalog
 * is the build's own output, checked by its digest rather than parsed with zod.
 */
export async function readBuiltTree(dir: string): Promise<BuiltTree | null> {
  try {
    if (!(await lstat(join(dir, FILES_DIR))).isSymbolicLink()) return null;
    const record = await readBuildRecord(dir);
    if (record.base !== undefined) return null;
    const catalogBytes = await readFile(join(dir, 'catalog.json'));
    if (sha256Hex(catalogBytes) !== record.catalog) return null;
    const catalog = JSON.parse(catalogBytes.toString('utf8')) as CatalogFile;
    return { dir, record, catalog, jars: catalog.versions.map((version) => `${version.sha256}.jar`) };
  } catch {
    return null;
  }
}

/**
 * The current tree with what of it the next build may reuse: its site until the new one is built,
 * and, if built by the same code, each answer whose inputs did not change (answer-inputs.ts).
 * A delta tree stands for its base, the tree it changes. A tree not as the build wrote it
 * reuses nothing; its manifest is read only when its routes are asked for. `read`: a tree this build
 * read already (the base of the change it served first), not read again.
 */
export async function readPreviousTree(
  dir: string | null,
  code: string,
  next: { catalog: Catalog; brands: readonly BrandSourceRecord[] },
  read: BuiltTree | null = null,
): Promise<PreviousTree | null> {
  if (!dir) return null;
  const served = await readBuildRecord(dir).catch(() => null);
  const baseDir = served?.base === undefined ? dir : join(dirname(dir), served.base);
  const built = read?.dir === baseDir ? read : await readBuiltTree(baseDir);
  if (!built || !served) return null;
  const { record, catalog, jars } = built;
  const changes = record.code === code ? diffCatalogs(catalog, next) : null;
  let routes: Promise<ReadonlyMap<string, string>> | undefined;
  const readAll = () => (routes ??= readRoutes(built.dir));
  return { dir: built.dir, record, servedCatalog: served.catalog, jars, changes, routes: readAll };
}

/**
 * A tree's routes as its manifest's lines hold them, checked by the tree's name (its digest) rather
 * than parsed with zod: 54,000 routes at 10,000 versions cost a release 0.2 s. Empty when not as written.
 */
async function readRoutes(dir: string): Promise<ReadonlyMap<string, string>> {
  const routes = new Map<string, string>();
  try {
    // Hashed as read: hashing the decoded text would encode its megabytes again.
    const bytes = await readFile(join(dir, 'manifest.json'));
    if (sha256Hex(bytes).slice(0, 20) !== basename(dir)) return routes;
    for (const [path, entry] of splitManifest(bytes.toString('utf8'), dir).routes)
      routes.set(path, typeof entry === 'string' ? entry : JSON.stringify(entry));
  } catch {
    routes.clear();
  }
  return routes;
}

/**
 * The previous tree's entries (as its manifest's text) of the paths whose inputs did not change:
 * their files are in the store, and the next tree takes them as written.
 */
export async function reusedAnswers(
  previous: PreviousTree | null,
  paths: readonly string[],
  catalog: Catalog,
): Promise<Map<string, string>> {
  const kept = new Map<string, string>();
  if (!previous?.changes) return kept;
  const routes = await previous.routes();
  const changes = changeSets(previous.changes);
  for (const path of paths) {
    const entry = routes.get(path);
    const status = () => (JSON.parse(entry!) as RouteEntry).status;
    if (entry && !readsChange(path, changes, { status, catalog: () => catalog })) kept.set(path, entry);
  }
  return kept;
}
