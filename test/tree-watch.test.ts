import { cp, mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningOrigin } from '../server/origin.ts';
import { CURRENT_LINK, TREES_DIR } from '../server/tree/format.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { followCurrentTree } from '../server/tree/follow.ts';
import { makeWorkspace, startTestOrigin, until, type Workspace } from './helpers.ts';

// server/tree/follow.ts: the origin notices a swap of dist/current from a watch event, long before its
// poll (5 s here) would; the poll stays as the fallback.

const POLL_MS = 5000;
/** What "at once" means here: well under POLL_MS, and under the 1 s a release may take end to end. */
const NOTICED_WITHIN_MS = 1000;

const ctx = {} as {
  workspace: Workspace;
  origin: RunningOrigin;
  first: string;
  warnings: string[];
  crashes: unknown[];
};
const onCrash = (error: unknown) => ctx.crashes.push(error);

/** Points dist/current at `trees/<name>` the way the build does: a new link renamed over the old one. */
async function pointAt(distDir: string, name: string) {
  const temporary = join(distDir, `.${CURRENT_LINK}-${name}`);
  await symlink(join(TREES_DIR, name), temporary);
  await rename(temporary, join(distDir, CURRENT_LINK));
}

/** A copy of the first tree under a new name, changed by `edit` (its manifest and catalog as JSON). */
async function copyTree(
  name: string,
  edit?: (files: { manifest: { routes: Record<string, unknown> }; catalog: { versions: unknown[] } }) => void,
) {
  const dir = join(ctx.workspace.distDir, TREES_DIR, name);
  await cp(ctx.first, dir, { recursive: true });
  if (edit) {
    const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
    const catalog = JSON.parse(await readFile(join(dir, 'catalog.json'), 'utf8'));
    edit({ manifest, catalog });
    await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
    await writeFile(join(dir, 'catalog.json'), JSON.stringify(catalog));
  }
  return dir;
}

async function servedTree(): Promise<string> {
  const answer = await fetch(`${ctx.origin.url}/healthz`);
  return ((await answer.json()) as { tree: string }).tree;
}

/** Swaps to `name` and returns how long until the origin answers from it. */
async function swapAndTime(name: string): Promise<number> {
  const started = performance.now();
  await pointAt(ctx.workspace.distDir, name);
  await until(async () => (await servedTree()) === name, `the origin serves ${name}`, POLL_MS * 3);
  return performance.now() - started;
}

const watching = suite('followCurrentTree: a real origin watching a real dist/');
watching.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.first = (await currentTreeDir(ctx.workspace.distDir))!;
  ctx.warnings = [];
  ctx.crashes = [];
  process.on('unhandledRejection', onCrash);
  process.on('uncaughtException', onCrash);
  ctx.origin = await startTestOrigin(ctx.workspace, {
    treePollMs: POLL_MS,
    warn: (line) => ctx.warnings.push(line),
  });
});
watching.after(async () => {
  await ctx.origin.close();
  process.off('unhandledRejection', onCrash);
  process.off('uncaughtException', onCrash);
  await ctx.workspace.remove();
});

watching('a swap is answered from the new tree within 1 s, though the link is read only every 5 s', async () => {
  for (const name of ['next-1', 'next-2', 'next-3']) {
    await copyTree(name);
    const ms = await swapAndTime(name);
    assert.ok(ms < NOTICED_WITHIN_MS, `${name} served ${Math.round(ms)} ms after the swap`);
  }
});

watching('dist/current removed, then created again: the next swap is still noticed at once', async () => {
  const before = await servedTree();
  await rm(join(ctx.workspace.distDir, CURRENT_LINK));
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.is(await servedTree(), before, 'without a link the tree served so far stays');
  await copyTree('after-removal');
  const ms = await swapAndTime('after-removal');
  assert.ok(ms < NOTICED_WITHIN_MS, `served ${Math.round(ms)} ms after the link came back`);
  await copyTree('after-removal-2');
  assert.ok((await swapAndTime('after-removal-2')) < NOTICED_WITHIN_MS, 'and the swap after that');
});

watching('a burst of swaps ends on the last tree', async () => {
  for (const name of ['burst-1', 'burst-2', 'burst-3', 'burst-4']) await copyTree(name);
  const started = performance.now();
  for (const name of ['burst-1', 'burst-2', 'burst-3', 'burst-4']) await pointAt(ctx.workspace.distDir, name);
  await until(async () => (await servedTree()) === 'burst-4', 'the last tree is served', POLL_MS * 3);
  assert.ok(performance.now() - started < NOTICED_WITHIN_MS, 'at once');
});

watching('an invalid route answers 500 and the rest of the tree is answered', async () => {
  const dir = await copyTree('bad-route', ({ manifest }) => {
    (manifest.routes['/api/plugin-versions'] as { status: unknown }).status = 'two hundred';
  });
  await swapAndTime('bad-route');
  const bad = await fetch(`${ctx.origin.url}/api/plugin-versions`);
  assert.is(bad.status, 500);
  assert.equal(await bad.json(), { error: 'Internal server error' });
  const tree = await openTree(dir);
  assert.throws(() => tree.routes.get('/api/plugin-versions'), /routes\["\/api\/plugin-versions"\]: status/);
  const latest = await fetch(`${ctx.origin.url}/api/plugin-versions/latest/papermc`);
  assert.is(latest.status, 200, 'another route of the same tree');
});

watching('an invalid catalog.json answers 500 where the catalog is used, and a good tree replaces it', async () => {
  await copyTree('bad-catalog', ({ catalog }) => {
    (catalog.versions[0] as { sha256: string }).sha256 = 'not hex';
  });
  await swapAndTime('bad-catalog');
  await until(() => ctx.warnings.length > 0, 'the invalid catalog is said a little after the swap', 3000);
  assert.match(
    ctx.warnings[0]!,
    /bad-catalog: answers that need the catalog fail until the next tree: .*versions\[0\]\.sha256/,
  );
  // Not in the manifest (no precomputed answer for this query), so answered live from the catalog.
  const live = await fetch(`${ctx.origin.url}/api/plugin-versions?page=1`);
  assert.is(live.status, 500);
  const precomputed = await fetch(`${ctx.origin.url}/api/plugin-versions/latest/papermc`);
  assert.is(precomputed.status, 200, 'answers from the manifest need no catalog');
  await copyTree('good-again');
  await swapAndTime('good-again');
  assert.is((await fetch(`${ctx.origin.url}/api/plugin-versions?page=1`)).status, 200);
});

watching('nothing was thrown out of the process and the watcher never failed', () => {
  assert.equal(ctx.crashes, []);
  assert.is(ctx.warnings.length, 1, 'the invalid catalog only');
});
watching.run();

const recreated = suite('followCurrentTree: dist/ itself removed and created again');
recreated.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.first = (await currentTreeDir(ctx.workspace.distDir))!;
});
recreated.after(() => ctx.workspace.remove());

recreated('the watcher moves to the new dist/ on the next poll and notices swaps in it at once', async () => {
  const pollMs = 1000;
  const { distDir } = ctx.workspace;
  const warnings: string[] = [];
  const follower = followCurrentTree(distDir, await openTree(ctx.first), () => {}, {
    intervalMs: pollMs,
    warn: (line) => warnings.push(line),
  });
  try {
    const moved = `${distDir}-old`;
    await rename(distDir, moved);
    await mkdir(join(distDir, TREES_DIR), { recursive: true });
    await new Promise((resolve) => setTimeout(resolve, pollMs * 1.5)); // one poll: it watches the new dist/
    // Each swap noticed well within a poll interval: by chance from polling alone, about 1 in 300.
    for (const name of ['new-1', 'new-2', 'new-3']) {
      await cp(ctx.first.replace(distDir, moved), join(distDir, TREES_DIR, name), { recursive: true });
      const started = performance.now();
      await pointAt(distDir, name);
      await until(() => follower.current().dir === join(distDir, TREES_DIR, name), `${name} is followed`, pollMs * 3);
      const ms = performance.now() - started;
      assert.ok(ms < pollMs * 0.15, `${name} followed ${Math.round(ms)} ms after the swap`);
    }
    assert.equal(warnings, []);
  } finally {
    follower.stop();
  }
});
recreated.run();
