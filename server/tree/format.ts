import { join } from 'node:path';
import { z } from 'zod';
import { ENCODINGS } from '../http/compress.ts';
import { CatalogVersion, UserProfiles } from '../versions/schema.ts';
import { BrandSourceRecord, brandKey } from '../brands/source-record.ts';
import { AnswerChanges } from './answer-inputs.ts';
import { PAGE_RULES } from '../page-paths.ts';
import { ProjectRecord } from '../project/schema.ts';

/**
 * dist/ layout: `current` is a symlink to `trees/<name>`, swapped atomically by the build. A tree
 * holds `manifest.json` (URL path -> file, status, headers), `catalog.json` (the validated records
 * the live routes answer from), `build.json` (what the next build may reuse, previous.ts) and
 * `files/`, content-addressed, so a JAR is stored once.
 */
export const CURRENT_LINK = 'current';
export const TREES_DIR = 'trees';
export const FILES_DIR = 'files';
/** Where the site's "page not found" page (site/src/pages/404.astro) is in the manifest. */
export const NOT_FOUND_PAGE = PAGE_RULES.notFound.pattern;
/** A tree's folder name: the start of its manifest's sha256. */
export const TREE_NAME = /^[0-9a-f]{20}$/;

export const RouteEntry = z.strictObject({
  file: z.string().regex(/^files\/[0-9a-f]{64}\.[a-z0-9]+$/),
  status: z.int().min(200).max(599),
  size: z.int().nonnegative(),
  headers: z.record(z.string(), z.string()),
  /** Codings kept beside `file` (`<file>.br`, `<file>.gz`), for JSON and SVG answers. */
  encodings: z.array(z.enum(ENCODINGS)).optional(),
});
export type RouteEntry = z.infer<typeof RouteEntry>;

export const Manifest = z.strictObject({
  format: z.literal(1),
  /** Digest of the inputs: a build whose inputs did not change can be skipped. */
  source: z.string(),
  routes: z.record(z.string(), RouteEntry),
});
export type Manifest = z.infer<typeof Manifest>;

export const CatalogFile = z.strictObject({
  versions: z.array(CatalogVersion),
  users: UserProfiles,
  brands: z.array(BrandSourceRecord),
  /** data/project.json, its icon checked (absent without the file: the catalog as before it). */
  project: ProjectRecord.optional(),
});
export type CatalogFile = z.infer<typeof CatalogFile>;

export const jarFile = (treeDir: string, sha256: string) => join(treeDir, FILES_DIR, `${sha256}.jar`);

/** The most versions a delta tree's head carries (TreeDelta.versions). */
export const DELTA_VERSIONS_MAX = 100;

/**
 * A release's delta tree (delta.ts) holds no routes of its own: it serves its base tree's answers
 * but those that read its changes (AnswerChanges), which the live routes answer from its catalog
 * until the next tree holds them precomputed; and the base's site pages when `site`.
 */
export const TreeDelta = z.strictObject({
  base: z.string().regex(TREE_NAME),
  changes: AnswerChanges,
  site: z.boolean(),
  /**
   * The new data's versions among the changed records, and all users when they changed: an origin
   * that holds its base's catalog makes this tree's from it (catalogAfterDelta) rather than parsing
   * catalog.json (5 MB at 10,000 versions). Absent when many records changed.
   */
  versions: z.array(CatalogVersion).max(DELTA_VERSIONS_MAX).optional(),
  users: UserProfiles.optional(),
});
export type TreeDelta = z.infer<typeof TreeDelta>;

/** What opening a tree checks of its manifest at once; each route is checked on first use (RouteTable). */
export const ManifestHead = z.strictObject({ format: z.literal(1), source: z.string(), delta: TreeDelta.optional() });
export type ManifestHead = z.infer<typeof ManifestHead>;

export function brandMap(brands: readonly BrandSourceRecord[]): ReadonlyMap<string, BrandSourceRecord> {
  return new Map(brands.map((b) => [brandKey(b.brand, b.variant), b]));
}
