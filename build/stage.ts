import { copyFile, link, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { sourceFile, type LoadedBrandSource } from '../server/brands/sources.ts';
import { jarPath, type Catalog } from '../server/versions/catalog.ts';
import { FILES_DIR, jarFile, type CatalogFile } from '../server/tree.ts';
import { allOrFirstError } from '../server/settle.ts';

/**
 * Starts a new tree: every JAR under files/<sha256>.jar (hard-linked from the previous tree when it
 * has it, so a rebuild does not copy unchanged JARs), every brand source under files/, and
 * catalog.json, which the live routes answer from.
 */
export async function stageTree(
  stagingDir: string,
  dataDir: string,
  catalog: Catalog,
  brands: LoadedBrandSource[],
  previousTree: string | null,
) {
  await mkdir(join(stagingDir, FILES_DIR), { recursive: true });
  const jars = [...new Set(catalog.versions.map((v) => v.sha256))];
  const byHash = new Map(catalog.versions.map((v) => [v.sha256, v]));
  // A few links at a time on libuv's threads: at 10,000 versions one after the other is most of the stage.
  const limit = pLimit(8);
  await allOrFirstError(
    jars.map((sha256) =>
      limit(async () => {
        const target = jarFile(stagingDir, sha256);
        const reused = previousTree
          ? await link(jarFile(previousTree, sha256), target).then(
              () => true,
              () => false,
            )
          : false;
        if (!reused) await copyFile(jarPath(dataDir, byHash.get(sha256)!.id), target);
      }),
    ),
  );
  const written = new Set<string>();
  for (const source of brands) {
    const file = sourceFile(source);
    if (written.has(file)) continue;
    written.add(file);
    await writeFile(join(stagingDir, file), source.bytes);
  }
  await writeFile(join(stagingDir, 'catalog.json'), catalogFileText(catalog, brands));
  return jars.length;
}

/** catalog.json's text: the validated records the live routes and the site read. */
export function catalogFileText(catalog: Catalog, brands: readonly LoadedBrandSource[]): string {
  const file: CatalogFile = {
    versions: [...catalog.versions],
    users: [...catalog.users.values()],
    brands: brands.map(({ bytes: _bytes, ...record }) => record),
  };
  return JSON.stringify(file);
}
