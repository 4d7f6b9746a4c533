import { readdir, rename, rm, stat, symlink, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { CURRENT_LINK, TREE_NAME, TREES_DIR } from './format.ts';
import { readBuildRecord } from './previous.ts';

/** Trees kept besides the current one, so requests that started on them can finish. */
const KEEP_PREVIOUS = 2;

/**
 * Names the staged tree by its manifest digest, then points dist/current at it with one rename (a
 * symlink replaced atomically): a reader sees the old tree or the new one, never a mix. Then prunes
 * the old trees, unless `prune` is false (a delta tree: the trees that follow it prune).
 */
export async function swapTree(distDir: string, stagingDir: string, name: string, prune = true): Promise<string> {
  const treesDir = join(distDir, TREES_DIR);
  const finalDir = join(treesDir, name);
  const exists = await stat(finalDir).then(
    () => true,
    () => false,
  );
  if (exists) await rm(stagingDir, { recursive: true, force: true });
  else await rename(stagingDir, finalDir);
  // A tree's modification time is when it was last made current (pruning keeps the most recent):
  // a rebuild that reuses an existing tree (data/ reverted) must not keep the time of its first build.
  const now = new Date();
  await utimes(finalDir, now, now);
  const tmpLink = join(distDir, `.${CURRENT_LINK}-${process.pid}-${Date.now()}`);
  await symlink(join(TREES_DIR, name), tmpLink);
  await rename(tmpLink, join(distDir, CURRENT_LINK));
  if (prune) await pruneTrees(treesDir, name);
  return finalDir;
}

/**
 * Removes all but the `KEEP_PREVIOUS` trees most recently made current before `keep`, and the base
 * of any kept delta tree (which serves its base's answers).
 */
async function pruneTrees(treesDir: string, keep: string) {
  // Only trees the build made (issue 42 item 4): another name there is someone else's, left alone.
  const names = (await readdir(treesDir)).filter((n) => n !== keep && TREE_NAME.test(n));
  const dated = await Promise.all(names.map(async (n) => ({ n, at: (await stat(join(treesDir, n))).mtimeMs })));
  dated.sort((a, b) => b.at - a.at);
  const kept = [keep, ...dated.slice(0, KEEP_PREVIOUS).map(({ n }) => n)];
  const bases = await Promise.all(kept.map((name) => baseOf(join(treesDir, name))));
  for (const { n } of dated.slice(KEEP_PREVIOUS))
    if (!bases.includes(n)) await rm(join(treesDir, n), { recursive: true, force: true });
}

/** The base a delta tree names in its build record; undefined for other trees (or no record). */
async function baseOf(treeDir: string): Promise<string | undefined> {
  return readBuildRecord(treeDir).then(
    (record) => record.base,
    () => undefined,
  );
}

/**
 * What killed builds leave: staging folders and the temporary link of a swap. Only a build holding
 * the lock stages or swaps, so any found by one that holds it is abandoned.
 */
export async function removeAbandonedStaging(distDir: string): Promise<void> {
  const treesDir = join(distDir, TREES_DIR);
  for (const name of await readdir(treesDir).catch(() => [] as string[])) {
    if (name.startsWith('.staging-')) await rm(join(treesDir, name), { recursive: true, force: true });
  }
  for (const name of await readdir(distDir)) {
    if (name.startsWith(`.${CURRENT_LINK}-`)) await rm(join(distDir, name), { force: true });
  }
}
