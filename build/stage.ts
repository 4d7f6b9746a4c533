import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { sourceFile, type BrandSourceRecord } from '../server/brands/source-record.ts';
import type { LoadedBrandSource } from '../server/brands/sources.ts';
import { jarPath, type Catalog } from '../server/versions/catalog.ts';
import type { CatalogFile } from '../server/tree/format.ts';
import type { FileStore } from './file-store.ts';
import { allOrFirstError } from '../server/settle.ts';

/**
 * Starts a new tree: its `files` linked to dist/'s store, every JAR and brand source put there
 * unless already there (copied from data/ once, whatever number of trees serve it), and
 * catalog.json (`catalogText`, from catalogFileText), which the live routes answer from. Returns how many JARs were copied.
 */
export async function stageTree(
  store: FileStore,
  stagingDir: string,
  dataDir: string,
  catalog: Catalog,
  brands: LoadedBrandSource[],
  catalogText: Uint8Array,
) {
  await store.attach(stagingDir);
  const byHash = new Map(catalog.versions.map((v) => [v.sha256, v]));
  const newJars = [...byHash].filter(([sha256]) => !store.has(`${sha256}.jar`));
  // A few copies at a time on libuv's threads.
  const limit = pLimit(8);
  await allOrFirstError(
    newJars.map(([sha256, version]) =>
      limit(() => store.put(`${sha256}.jar`, { copyOf: jarPath(dataDir, version.id) })),
    ),
  );
  for (const source of brands) {
    const file = sourceFile(source);
    const name = file.slice(file.indexOf('/') + 1);
    if (!store.has(name)) await store.put(name, source.bytes);
  }
  await writeFile(join(stagingDir, 'catalog.json'), catalogText);
  return newJars.length;
}

/** catalog.json's text: the validated records the live routes and the site read. */
export function catalogFileText(catalog: Catalog, brands: readonly BrandSourceRecord[]): string {
  const file: CatalogFile = {
    versions: [...catalog.versions],
    users: [...catalog.users.values()],
    brands: [...brands],
  };
  return JSON.stringify(file);
}
