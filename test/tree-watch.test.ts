import { cp, mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningOrigin } from '../server/origin.ts';
import { CURRENT_LINK, TREES_DIR } from '../server/tree/format.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { followCurrentTree } from '../server/tree/follow.ts';
import { makeWorkspace, startTestOrigin, until, type Workspace } from './helpers.ts';
import { collectLog } from './collect-log.ts';

// server/tree/follow.ts: the origin notices a swap of dist/current from a watch event, long before its
// poll would; the poll stays as the fallback. The poll here is 10 minutes and a swap must be served
// within 30 s, so whatever is noticed was noticed from the watch event, however loaded the machine
// (how fast a release is served end to end is the bench's: docs/benchmarks.md).

const POLL_MS = 10 * 60_000;
const NOTICED_WITHIN_MS = 30_000;

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

/** Swaps to `name` and waits until the origin answers from it (bounded by NOTICED_WITHIN_MS). */
async function swapAndWait(name: string): Promise<void> {
  await pointAt(ctx.workspace.distDir, name);
  await until(async () => (await servedTree()) === name, `the origin serves ${name}`, NOTICED_WITHIN_MS);
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
    logger: collectLog(ctx.warnings),
  });
});
watching.after(async () => {
  await ctx.origin.close();
  process.off('unhandledRejection', onCrash);
  process.off('uncaughtException', onCrash);
  await ctx.workspace.remove();
});

watching('a swap is answered from the new tree from its watch event, the link never polled', async () => {
  for (const name of ['next-1', 'next-2', 'next-3']) {
    await copyTree(name);
    await swapAndWait(name);
  }
});

watching('dist/current removed, then created again: the next swap is still noticed at once', async () => {
  const before = await servedTree();
  await rm(join(ctx.workspace.distDir, CURRENT_LINK));
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.is(await servedTree(), before, 'without a link the tree served so far stays');
  await copyTree('after-removal');
  await swapAndWait('after-removal');
  await copyTree('after-removal-2');
  await swapAndWait('after-removal-2');
});

watching('a burst of swaps ends on the last tree', async () => {
  for (const name of ['burst-1', 'burst-2', 'burst-3', 'burst-4']) await copyTree(name);
  for (const name of ['burst-1', 'burst-2', 'burst-3', 'burst-4']) await pointAt(ctx.workspace.distDir, name);
  await until(async () => (await servedTree()) === 'burst-4', 'the last tree is served', NOTICED_WITHIN_MS);
});

watching('an invalid route answers 500 and the rest of the tree is answered', async () => {
  const dir = await copyTree('bad-route', ({ manifest }) => {
    (manifest.routes['/api/plugin-versions'] as { status: unknown }).status = 'two hundred';
  });
  await swapAndWait('bad-route');
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
  await swapAndWait('bad-catalog');
  await until(() => ctx.warnings.length > 0, 'the invalid catalog is said a little after the swap', NOTICED_WITHIN_MS);
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
  await swapAndWait('good-again');
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
  const pollMs = 4000;
  const { distDir } = ctx.workspace;
  const warnings: string[] = [];
  const follower = followCurrentTree(distDir, await openTree(ctx.first), () => {}, {
    intervalMs: pollMs,
    log: collectLog(warnings),
  });
  try {
    const moved = `${distDir}-old`;
    await rename(distDir, moved);
    await mkdir(join(distDir, TREES_DIR), { recursive: true });
    await new Promise((resolve) => setTimeout(resolve, pollMs * 1.5)); // one poll: it watches the new dist/
    // Each swap followed within a quarter of the poll interval: by chance from polling alone, 1 in 1,024
    // for the five (a watch event takes milliseconds; a quarter of 4 s leaves room for a loaded machine).
    for (const name of ['new-1', 'new-2', 'new-3', 'new-4', 'new-5']) {
      await cp(ctx.first.replace(distDir, moved), join(distDir, TREES_DIR, name), { recursive: true });
      const started = performance.now();
      await pointAt(distDir, name);
      await until(() => follower.current().dir === join(distDir, TREES_DIR, name), `${name} is followed`, pollMs * 3);
      const ms = performance.now() - started;
      assert.ok(ms < pollMs / 4, `${name} followed ${Math.round(ms)} ms after the swap`);
    }
    assert.equal(warnings, []);
  } finally {
    follower.stop();
  }
});
recreated.run();
