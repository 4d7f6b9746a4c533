import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import { loadCatalog, sha256Hex } from '../server/versions/catalog.ts';
import { TREES_DIR, currentTreeDir, readManifestSource, type Manifest } from '../server/tree.ts';
import { listStaticPaths } from './paths.ts';
import { prerender } from './prerender.ts';
import { stageTree } from './stage.ts';
import { swapTree } from './swap.ts';

/** Bump when the tree's layout or any answer's bytes change for the same data/. */
const TREE_FORMAT = 1;

export type BuildOptions = {
  dataDir: string;
  distDir: string;
  /** Skip the build when dist/current was built from the same inputs. */
  ifChanged?: boolean;
  log?: (line: string) => void;
};

export type BuildResult = { treeDir: string; routes: number; skipped: boolean };

/** data/ -> dist/trees/<digest>, then dist/current swapped to it. One progress line per step. */
export async function runBuild(options: BuildOptions): Promise<BuildResult> {
  // One build at a time per dist/: a build that loaded data/ before a release wrote its record must
  // not swap in after the release's own build, hiding it until the next one.
  await mkdir(options.distDir, { recursive: true });
  const release = await lock(options.distDir, {
    lockfilePath: join(options.distDir, '.build.lock'),
    stale: 60_000,
    retries: { retries: 120, minTimeout: 100, maxTimeout: 1000 },
  });
  try {
    return await buildLocked(options);
  } finally {
    await release();
  }
}

async function buildLocked({ dataDir, distDir, ifChanged = false, log = () => {} }: BuildOptions): Promise<BuildResult> {
  const step = timed(log);
  const catalog = await step('load', async () => {
    const loaded = await loadCatalog(dataDir);
    return [loaded, `${loaded.versions.length} versions, ${loaded.users.size} users from ${dataDir}`] as const;
  });
  const source = sha256Hex(
    JSON.stringify({ TREE_FORMAT, versions: catalog.versions, users: [...catalog.users.values()] }),
  );
  const previousTree = await currentTreeDir(distDir);
  if (ifChanged && (await readManifestSource(distDir)) === source && previousTree) {
    log(`[build] unchanged since the current tree: ${previousTree}`);
    return { treeDir: previousTree, routes: 0, skipped: true };
  }
  const stagingDir = join(distDir, TREES_DIR, `.staging-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(stagingDir, { recursive: true });
  try {
    await step('stage', async () => {
      await stageTree(stagingDir, dataDir, catalog, previousTree);
      return [undefined, `${new Set(catalog.versions.map((v) => v.sha256)).size} JARs`] as const;
    });
    const paths = await step('list paths', async () => {
      const list = listStaticPaths(catalog);
      return [list, `${list.length} routes`] as const;
    });
    const tree = { dir: stagingDir, catalog, routes: new Map(), source };
    const routes = await step('prerender', async () => [await prerender(tree, paths), `${paths.length} answers`] as const);
    const manifestText = JSON.stringify({ format: 1, source, routes } satisfies Manifest);
    await step('write', async () => {
      await writeFile(join(stagingDir, 'manifest.json'), manifestText);
      return [undefined, 'manifest.json'] as const;
    });
    const treeDir = await step('swap', async () => {
      const dir = await swapTree(distDir, stagingDir, sha256Hex(manifestText).slice(0, 20));
      return [dir, `${join(distDir, 'current')} -> ${dir}`] as const;
    });
    return { treeDir, routes: paths.length, skipped: false };
  } catch (error) {
    await rm(stagingDir, { recursive: true, force: true });
    throw error;
  }
}

function timed(log: (line: string) => void) {
  return async <T>(name: string, run: () => Promise<readonly [T, string]>): Promise<T> => {
    const started = performance.now();
    const [value, summary] = await run();
    log(`[build] ${name}: ${summary} (${Math.round(performance.now() - started)} ms)`);
    return value;
  };
}
