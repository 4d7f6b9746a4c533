import { readFile, readdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { TREES_DIR } from '../server/tree/format.ts';
import { SHARED_BUILD_CACHE, makeWorkspace, type Workspace } from './helpers.ts';

// server/tree/swap.ts: dist/current is replaced atomically and the trees before it are pruned, keeping the
// two most recently made current (requests that started on them can finish).

const ctx = {} as { workspace: Workspace; users: string; swapped: string[] };

/**
 * Builds data/ with the first user's nickname set to `nickname` (null: data/ as shipped); the tree's
 * name. Every tree made current on the way is added to ctx.swapped: a build that reuses answers
 * swaps twice (first the new catalog with the answers it changed left to the live routes).
 */
async function buildWith(nickname: string | null): Promise<string> {
  const users = JSON.parse(ctx.users) as { nickname?: string }[];
  if (nickname !== null) users[0]!.nickname = nickname;
  await writeFile(join(ctx.workspace.dataDir, 'users.json'), nickname === null ? ctx.users : JSON.stringify(users));
  const { treeDir } = await runBuild({
    dataDir: ctx.workspace.dataDir,
    distDir: ctx.workspace.distDir,
    cacheDir: SHARED_BUILD_CACHE,
    site: false,
    log: (line) => {
      const swapped = /^\[build\] swap: \S+ -> \S+\/([0-9a-f]{20})\b/.exec(line);
      if (swapped) ctx.swapped.push(swapped[1]!);
    },
  });
  return basename(treeDir);
}

const trees = () =>
  readdir(join(ctx.workspace.distDir, TREES_DIR)).then((names) => names.filter((n) => !n.startsWith('.')).sort());

/** The current tree and the two made current last before it (each once). */
const kept = () => [...new Set([...ctx.swapped].reverse())].slice(0, 3).sort();

const prune = suite('swapTree: pruning old trees');
prune.before(async () => {
  ctx.workspace = await makeWorkspace({ build: false });
  ctx.users = await readFile(join(ctx.workspace.dataDir, 'users.json'), 'utf8');
  ctx.swapped = [];
});
prune.after(() => ctx.workspace.remove());

prune(
  'a rebuild that reuses a tree (data/ reverted) counts as made current now: the tree live a moment ago is kept',
  async () => {
    const a = await buildWith(null);
    const b = await buildWith('Second');
    assert.equal(await trees(), kept(), 'the current tree and the two made current before it');
    const d = await buildWith('Third');
    assert.equal(await trees(), kept());
    assert.not.ok((await trees()).includes(a), 'the first tree, made current four swaps ago, is pruned');
    assert.is(await buildWith(null), a, 'data/ reverted: the first tree is reused');
    assert.equal(await trees(), kept());
    const c = await buildWith('Fourth');
    // The reused tree was made current a moment ago: it is kept, where b and d (made current before it) go.
    assert.equal(await trees(), kept(), `a=${a} b=${b} d=${d} c=${c}`);
    assert.ok((await trees()).includes(a), 'the reused tree is kept');
    for (const older of [b, d]) assert.not.ok((await trees()).includes(older), `${older} is pruned`);
  },
);
prune.run();
