import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeployOptions } from '../server/config.ts';
import { sha256Hex } from '../server/helpers/digest.ts';
import type { RateLimitPolicy } from '../server/http/rate-limit.ts';
import { TREES_DIR, type ManifestHead, type RouteEntry } from '../server/tree/format.ts';
import { manifestText, type EntryOrText } from '../server/tree/manifest-text.ts';
import { BUILD_RECORD, type BuildRecord } from '../server/tree/previous.ts';
import { swapTree } from '../server/tree/swap.ts';

/** One progress line per step: `run` gives the step's value and its summary. */
export type Step = <T>(name: string, run: () => Promise<readonly [T, string]>) => Promise<T>;

/** What staging a tree needs of the build. */
type StagingContext = { distDir: string; rateLimit: RateLimitPolicy | null; step: Step };

/** A staged tree's manifest: its routes, head and build record. */
type StagedTree = { routes: Record<string, EntryOrText<RouteEntry>>; record: BuildRecord; head: ManifestHead };

type TreeToSwap<T extends StagedTree> = {
  /** Puts the tree's files and catalog.json in place (stageTree). */
  stage: (stagingDir: string) => Promise<unknown>;
  /** Adds its answers; returns its manifest's content. */
  fill: (stagingDir: string) => Promise<T>;
  /**
   * The finished tree writes the deploy configs; a tree that others follow serves the origins only
   * and writes none (`until` says what follows): nginx.conf deploys from the
   * finished tree, the one `npm run build` and `depot release` end on. Writing them twice cost a
   * release 1.3 s at 10,000 versions (100 MB of configs).
   */
  configs: { deploy: DeployOptions & { distDir: string } } | { until: string };
  /** Said after the swap's line. */
  swapped: string;
  /** False for a delta tree: the trees that follow it prune. */
  prune?: boolean;
};

/**
 * A tree staged in a new folder under trees/, filled, its manifest written, then swapped in as
 * dist/current; a failure on the way removes the folder. Returns the tree's folder and what `fill` gave.
 */
export async function withStagingDir<T extends StagedTree>(
  build: StagingContext,
  tree: TreeToSwap<T>,
): Promise<{ treeDir: string; staged: T }> {
  const stagingDir = join(build.distDir, TREES_DIR, `.staging-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(stagingDir, { recursive: true });
  try {
    await tree.stage(stagingDir);
    const staged = await tree.fill(stagingDir);
    const treeName = await build.step('write', async () => {
      const started = performance.now();
      const name = await writeManifest(stagingDir, staged.routes, staged.record, staged.head);
      // The API tree's own part of the step, apart from the deploy configs that follow it.
      const manifestMs = Math.round(performance.now() - started);
      const configs =
        'deploy' in tree.configs
          ? await (
              await import('./deploy-configs.ts')
            ).writeDeployConfigs(stagingDir, name, parsedEntries(staged.routes), tree.configs.deploy, build.rateLimit)
          : `no deploy configs until ${tree.configs.until}`;
      return [name, `manifest.json (${manifestMs} ms), ${configs}`] as const;
    });
    const treeDir = await build.step('swap', async () => {
      const dir = await swapTree(build.distDir, stagingDir, treeName, tree.prune ?? true);
      return [dir, `${join(build.distDir, 'current')} -> ${dir}${tree.swapped}`] as const;
    });
    return { treeDir, staged };
  } catch (error) {
    await rm(stagingDir, { recursive: true, force: true });
    throw error;
  }
}

/** Writes a staged tree's manifest and build record; returns the tree's name (its manifest's digest). */
async function writeManifest(
  stagingDir: string,
  routes: Record<string, EntryOrText<RouteEntry>>,
  record: BuildRecord,
  head: ManifestHead,
): Promise<string> {
  // Encoded once, for its digest (the tree's name) and the file: megabytes at 1,000 versions.
  const manifest = Buffer.from(manifestText(head, Object.entries(routes)));
  await writeFile(join(stagingDir, 'manifest.json'), manifest);
  await writeFile(join(stagingDir, BUILD_RECORD), JSON.stringify(record));
  return sha256Hex(manifest).slice(0, 20);
}

/**
 * Entries taken from the previous tree's manifest as text, parsed for the deploy configs. They are
 * the build's own output, checked by the tree's name (the manifest's digest) when read.
 */
function parsedEntries(routes: Record<string, EntryOrText<RouteEntry>>): Record<string, RouteEntry> {
  const parsed: Record<string, RouteEntry> = {};
  for (const [path, entry] of Object.entries(routes))
    parsed[path] = typeof entry === 'string' ? (JSON.parse(entry) as RouteEntry) : entry;
  return parsed;
}
