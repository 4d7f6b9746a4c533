import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { sourceFile, type BrandSourceRecord } from '../server/brands/source-record.ts';
import type { LoadedBrandSource } from '../server/brands/sources.ts';
import { jarPath, type Catalog } from '../server/versions/catalog.ts';
import type { CatalogFile } from '../server/tree/format.ts';
import type { FileStore } from './file-store.ts';
import type { LoadedProject } from '../server/project/load.ts';
import type { ProjectRecord } from '../server/project/schema.ts';
import { allOrFirstError } from '../server/helpers/settle.ts';

/**
 * Starts a new tree: its `files` linked to dist/'s store, every JAR and brand source put there
 * unless already there (copied from data/ once, whatever number of trees serve it), and
 * catalog.json (`catalogText`, from catalogFileText), which the live routes answer from; the project's
 * icon source beside the brand sources. Returns how many JARs were copied.
 */
export async function stageTree(
  store: FileStore,
  stagingDir: string,
  dataDir: string,
  catalog: Catalog,
  brands: LoadedBrandSource[],
  catalogText: Uint8Array,
  project?: LoadedProject,
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
  const icon = project?.record.icon;
  if (icon && project.iconBytes) {
    const name = sourceFile(icon).slice('files/'.length);
    if (!store.has(name)) await store.put(name, project.iconBytes);
  }
  await writeFile(join(stagingDir, 'catalog.json'), catalogText);
  return newJars.length;
}

/** catalog.json's text: the validated records the live routes and the site read. */
export function catalogFileText(
  catalog: Catalog,
  brands: readonly BrandSourceRecord[],
  project?: ProjectRecord,
): string {
  const file: CatalogFile = {
    versions: [...catalog.versions],
    users: [...catalog.users.values()],
    brands: [...brands],
    // Absent without data/project.json: the same bytes as before the field existed.
    ...(project ? { project } : {}),
  };
  return JSON.stringify(file);
}
