import { readlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { ENCODINGS } from './http/compress.ts';
import { createCatalog, type Catalog } from './versions/catalog.ts';
import { parseFile, readJsonFile } from './data-files.ts';
import { CatalogVersion, UserProfiles } from './versions/schema.ts';
import { BrandSourceRecord, brandKey } from './brands/sources.ts';

/**
 * dist/ layout: `current` is a symlink to `trees/<name>`, swapped atomically by the build. A tree
 * holds `manifest.json` (URL path -> file, status, headers), `catalog.json` (the validated records
 * the live routes answer from) and `files/`, content-addressed, so a JAR is stored once.
 */
export const CURRENT_LINK = 'current';
export const TREES_DIR = 'trees';
export const FILES_DIR = 'files';

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
});
export type CatalogFile = z.infer<typeof CatalogFile>;

export type Tree = {
  dir: string;
  catalog: Catalog;
  /** Brand sources by `brand/variant`; their bytes are tree files too. */
  brands: ReadonlyMap<string, BrandSourceRecord>;
  routes: ReadonlyMap<string, RouteEntry>;
  source: string;
};

export const jarFile = (treeDir: string, sha256: string) => join(treeDir, FILES_DIR, `${sha256}.jar`);

export async function openTree(dir: string): Promise<Tree> {
  const manifestFile = join(dir, 'manifest.json');
  const manifest = parseFile(Manifest, await readJsonFile(manifestFile), manifestFile);
  return {
    dir,
    ...(await readTreeCatalog(dir)),
    routes: new Map(Object.entries(manifest.routes)),
    source: manifest.source,
  };
}

/** A tree's catalog.json, validated: what the live routes answer from, and what the site is built from. */
export async function readTreeCatalog(dir: string): Promise<Pick<Tree, 'catalog' | 'brands'>> {
  const catalogFile = join(dir, 'catalog.json');
  const { versions, users, brands } = parseFile(CatalogFile, await readJsonFile(catalogFile), catalogFile);
  return { catalog: createCatalog(versions, users), brands: brandMap(brands) };
}

/** The tree `dist/current` points at, or null before the first build. */
export async function currentTreeDir(distDir: string): Promise<string | null> {
  const target = await readlink(join(distDir, CURRENT_LINK)).catch(() => null);
  return target === null ? null : resolve(distDir, target);
}

export async function readManifestSource(distDir: string): Promise<string | null> {
  const dir = await currentTreeDir(distDir);
  if (!dir) return null;
  const raw = await readJsonFile(join(dir, 'manifest.json')).catch(() => null);
  const parsed = Manifest.safeParse(raw);
  return parsed.success ? parsed.data.source : null;
}

/** A tree that failed to open is said again at most this often while `current` still points at it. */
const REPEAT_FAILURE_MS = 60_000;

/**
 * Follows `dist/current`: polls the link (one readlink per interval) and opens a new tree when it
 * moves. A request in flight keeps the tree it started with; old trees stay on disk for a while.
 * A tree that fails to open is reported once, then at most once a minute, and tried again less
 * and less often (up to once a minute); a link that moves on to another tree is tried at once.
 */
export function followCurrentTree(
  distDir: string,
  initial: Tree,
  onError: (error: unknown, dir: string) => void,
  options: { intervalMs?: number; now?: () => number } = {},
) {
  const intervalMs = options.intervalMs ?? 200;
  const now = options.now ?? Date.now;
  let tree = initial;
  let busy = false;
  let failing: { dir: string; failures: number; retryAt: number; saidAt: number } | null = null;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    let dir: string | null = null;
    try {
      dir = await currentTreeDir(distDir);
      if (!dir || dir === tree.dir) return;
      if (failing?.dir === dir && now() < failing.retryAt) return;
      tree = await openTree(dir);
      failing = null;
    } catch (error) {
      const failed = dir ?? distDir;
      const time = now();
      const again = failing?.dir === failed ? failing : null;
      const failures = (again?.failures ?? 0) + 1;
      const say = !again || time - again.saidAt >= REPEAT_FAILURE_MS;
      failing = {
        dir: failed,
        failures,
        retryAt: time + Math.min(REPEAT_FAILURE_MS, intervalMs * 2 ** failures),
        saidAt: say ? time : again.saidAt,
      };
      if (say) onError(error, failed);
    } finally {
      busy = false;
    }
  }, intervalMs);
  timer.unref();
  return { current: () => tree, stop: () => clearInterval(timer) };
}

export function brandMap(brands: readonly BrandSourceRecord[]): ReadonlyMap<string, BrandSourceRecord> {
  return new Map(brands.map((b) => [brandKey(b.brand, b.variant), b]));
}
