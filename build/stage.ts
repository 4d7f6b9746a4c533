import { copyFile, link, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sourceFile, type LoadedBrandSource } from '../server/brands/sources.ts';
import { jarPath, type Catalog } from '../server/versions/catalog.ts';
import { FILES_DIR, jarFile, type CatalogFile } from '../server/tree.ts';

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
  const written = new Set<string>();
  for (const version of catalog.versions) {
    if (written.has(version.sha256)) continue;
    written.add(version.sha256);
    const target = jarFile(stagingDir, version.sha256);
    const reused = previousTree
      ? await link(jarFile(previousTree, version.sha256), target).then(
          () => true,
          () => false,
        )
      : false;
    if (!reused) await copyFile(jarPath(dataDir, version.id), target);
  }
  for (const source of brands) {
    const file = sourceFile(source);
    if (written.has(file)) continue;
    written.add(file);
    await writeFile(join(stagingDir, file), source.bytes);
  }
  const file: CatalogFile = {
    versions: [...catalog.versions],
    users: [...catalog.users.values()],
    brands: brands.map(({ bytes: _bytes, ...record }) => record),
  };
  await writeFile(join(stagingDir, 'catalog.json'), JSON.stringify(file));
}
