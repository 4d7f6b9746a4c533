import { readFile, readdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { TREES_DIR } from '../server/tree.ts';
import { SHARED_BUILD_CACHE, makeWorkspace, type Workspace } from './helpers.ts';

// build/swap.ts: dist/current is replaced atomically and the trees before it are pruned, keeping the
// two most recently made current (requests that started on them can finish).

const ctx = {} as { workspace: Workspace; users: string };

/** Builds data/ with the first user's nickname set to `nickname` (null: data/ as shipped); the tree's name. */
async function buildWith(nickname: string | null): Promise<string> {
  const users = JSON.parse(ctx.users) as { nickname?: string }[];
  if (nickname !== null) users[0]!.nickname = nickname;
  await writeFile(join(ctx.workspace.dataDir, 'users.json'), nickname === null ? ctx.users : JSON.stringify(users));
  const { treeDir } = await runBuild({
    dataDir: ctx.workspace.dataDir,
    distDir: ctx.workspace.distDir,
    cacheDir: SHARED_BUILD_CACHE,
    site: false,
  });
  return basename(treeDir);
}

const trees = () =>
  readdir(join(ctx.workspace.distDir, TREES_DIR)).then((names) => names.filter((n) => !n.startsWith('.')).sort());

const prune = suite('swapTree: pruning old trees');
prune.before(async () => {
  ctx.workspace = await makeWorkspace({ build: false });
  ctx.users = await readFile(join(ctx.workspace.dataDir, 'users.json'), 'utf8');
});
prune.after(() => ctx.workspace.remove());

prune(
  'a rebuild that reuses a tree (data/ reverted) counts as made current now: the tree live a moment ago is kept',
  async () => {
    const a = await buildWith(null);
    const b = await buildWith('Second');
    const d = await buildWith('Third');
    assert.equal(await trees(), [a, b, d].sort());
    assert.is(await buildWith(null), a, 'data/ reverted: the first tree is reused');
    assert.equal(await trees(), [a, b, d].sort(), 'nothing pruned yet: two trees besides the current one');
    const c = await buildWith('Fourth');
    // Made current in the order a, b, d, a, c: the two before c are a (a moment ago) and d; b goes.
    assert.equal(await trees(), [a, c, d].sort(), `a=${a} b=${b} d=${d} c=${c}`);
  },
);
prune.run();
