import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { z } from 'zod';
import { BrandSourceRecord, sourceFile } from '../server/brands/source-record.ts';
import { parseFile, readJsonFile } from '../server/data-files.ts';
import { ENCODINGS, ENCODING_EXTENSIONS } from '../server/http/compress.ts';
import { FILES_DIR, TREE_NAME, TREES_DIR } from '../server/tree/format.ts';
import { splitManifest } from '../server/tree/manifest-text.ts';

/**
 * dist/files/: the files of every tree, content-addressed (`<sha256>.<ext>`, and its `.br`/`.gz`),
 * shared by the trees through each tree's `files` link (-> ../../files). A build writes only the
 * files no tree has yet, so what a release costs does not grow with what was released before it.
 * Only the build holding dist/'s lock writes here; files are never changed once written.
 */
export const STORE_DIR = 'files';

/** The store as one build writes it: what it holds (each name looked up once, then kept up to date) and how to add to it. */
export type FileStore = {
  /** Makes `files` in a staged tree a link to the store (a relative one: dist/ may be copied or moved). */
  attach(treeDir: string): Promise<void>;
  /** Is `name` (`<sha256>.<ext>`, or its `.br`/`.gz`) in the store? */
  has(name: string): boolean;
  /**
   * Puts bytes (or a copy of a file) under `name` in one rename, so a build killed meanwhile leaves
   * no partial file under a name the next build would trust. Not flushed to disk: like the trees
   * before the store, a power loss during a build may lose them.
   */
  put(name: string, content: Uint8Array | { copyOf: string }): Promise<void>;
};

/** `present`: names known to be in the store (the current tree's JARs: a kept tree's files stay). */
export async function openFileStore(distDir: string, present: Iterable<string> = []): Promise<FileStore> {
  const dir = join(distDir, STORE_DIR);
  await mkdir(dir, { recursive: true });
  // Looked up name by name: a release asks about its own answers and each version's JAR (10,000
  // lookups: 12 ms cached, 65 ms cold), where listing a store of 70,000 files took 0.14 s.
  const names = new Map<string, boolean>([...present].map((name) => [name, true]));
  return {
    attach: (treeDir) => symlink(relative(treeDir, dir), join(treeDir, FILES_DIR)),
    has(name) {
      let known = names.get(name);
      if (known === undefined) names.set(name, (known = existsSync(join(dir, name))));
      return known;
    },
    async put(name, content) {
      const path = join(dir, name);
      const temporary = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
      try {
        if (content instanceof Uint8Array) await writeFile(temporary, content);
        else await copyFile(content.copyOf, temporary);
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
      names.set(name, true);
    },
  };
}

/**
 * Removes from the store every file that no tree in dist/trees names (its routes' files and their
 * codings, its JARs and brand sources): the files of pruned trees and of killed builds, and their
 * temporary files. Run by a build once it swapped, holding the lock, so no build writes meanwhile.
 * A tree that cannot be read stops it (nothing removed). Returns how many files were removed.
 */
export async function removeUnusedFiles(distDir: string): Promise<number> {
  const treesDir = join(distDir, TREES_DIR);
  // The kept trees share most of their routes' entries: each distinct entry's text is parsed once.
  const entries = new Set<string>();
  const used = new Set<string>();
  for (const tree of await readdir(treesDir)) {
    if (!TREE_NAME.test(tree)) continue;
    const names = await treeFileNames(join(treesDir, tree), entries);
    for (const name of names) used.add(name);
  }
  for (const entry of entries) for (const name of routeFileNames(entry)) used.add(name);
  let removed = 0;
  for (const name of await storeContents(distDir)) {
    // Only files the build wrote (issue 42 item 4, STORE_FILE_NAME); another is left alone.
    if (used.has(name) || !STORE_FILE_NAME.test(name)) continue;
    await rm(join(distDir, STORE_DIR, name), { force: true });
    removed++;
  }
  return removed;
}

/**
 * How the build names a file of the store: its content's sha256 and its extension, and a coding's;
 * and one being written (`.tmp-<pid>-<n>`), which a killed build leaves.
 */
const STORE_FILE_NAME = /^[0-9a-f]{64}(\.[a-z0-9]+)+(\.tmp-\d+-[0-9a-f]+)?$/;

/** The names in the store now. */
async function storeContents(distDir: string): Promise<Set<string>> {
  return new Set(await readdir(join(distDir, STORE_DIR)).catch(() => [] as string[]));
}

/** What a route's entry and a tree's catalog.json name in files/ (validated: only the fields read). */
const NamedFiles = {
  route: z.object({ file: z.string(), encodings: z.array(z.enum(ENCODINGS)).optional() }),
  catalog: z.object({
    versions: z.array(z.object({ sha256: z.string() })),
    brands: z.array(z.object({ sha256: z.string(), format: BrandSourceRecord.shape.format })),
    project: z
      .object({ icon: z.object({ sha256: z.string(), format: BrandSourceRecord.shape.format }).optional() })
      .optional(),
  }),
};

const inFiles = (file: string) => file.slice(`${FILES_DIR}/`.length);

/**
 * What a tree's catalog.json names in files/; its routes' entries, as its manifest's lines hold
 * them, are added to `entries` (a manifest of 54,000 routes at 10,000 versions, parsed whole
 * with zod for each of the three kept trees, cost a release's clean-up a second).
 */
async function treeFileNames(treeDir: string, entries: Set<string>): Promise<string[]> {
  const manifestFile = join(treeDir, 'manifest.json');
  const catalogFile = join(treeDir, 'catalog.json');
  const { routes } = splitManifest(await readFile(manifestFile, 'utf8'), manifestFile);
  for (const entry of routes.values()) entries.add(typeof entry === 'string' ? entry : JSON.stringify(entry));
  const catalog = parseFile(NamedFiles.catalog, await readJsonFile(catalogFile), catalogFile);
  return [
    ...catalog.versions.map((version) => `${version.sha256}.jar`),
    ...catalog.brands.map((brand) => inFiles(sourceFile(brand))),
    ...(catalog.project?.icon ? [inFiles(sourceFile(catalog.project.icon))] : []),
  ];
}

/** A route entry's file and its codings' files; throws for an entry that names none. */
function routeFileNames(entryText: string): string[] {
  const entry = NamedFiles.route.parse(JSON.parse(entryText));
  const file = inFiles(entry.file);
  return [file, ...(entry.encodings ?? []).map((encoding) => `${file}.${ENCODING_EXTENSIONS[encoding]}`)];
}
