import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { currentTreeDir, openTree, type Tree } from '../server/tree/open.ts';
import {
  SHARED_BUILD_CACHE,
  addPaperVersion,
  makeWorkspace,
  pluginJar,
  snapshotTree,
  startTestOrigin,
} from './helpers.ts';

// Issue 32: a history page lists a filter's newest versions, older ones are on pages counted from
// the first release, and a release renders only the pages whose data changed; the tree it leaves
// is a full build's, pages included.

/** Versions added to the demo's 14: two older pages of 100 for /versions would need 300. */
const ADDED = 230;

/** The version page links of a history page, in its order: one per row. */
async function rowsOf(tree: Tree, path: string): Promise<string[]> {
  const html = await pageHtml(tree, path);
  return [...html.matchAll(/<th scope="row"><a href="\/version\/([^"]+)"/g)].map((match) => match[1]!);
}

async function pageHtml(tree: Tree, path: string): Promise<string> {
  const entry = tree.routes.get(path);
  assert.ok(entry, `${path} is a route`);
  return readFile(join(tree.dir, entry!.file), 'utf8');
}

test('history pages: the newest at the filter, older ones of 100 that a release leaves as they were', async () => {
  const workspace = await makeWorkspace({ build: false, site: true });
  try {
    const { dataDir, distDir } = workspace;
    for (let i = 0; i < ADDED; i++) await addPaperVersion(dataDir, `7.0.${i}`, pluginJar(`7.0.${i}`));
    const build = async () => {
      const lines: string[] = [];
      await runBuild({ dataDir, distDir, cacheDir: SHARED_BUILD_CACHE, log: (line) => lines.push(line) });
      return { tree: await openTree((await currentTreeDir(distDir))!), lines };
    };
    const { tree } = await build();
    const total = tree.catalog.versions.length;
    assert.is(total, 15 + ADDED);

    // 245 versions: 145 on /versions (between 100 and 199), the first 100 released on page 1.
    const newest = await rowsOf(tree, '/versions');
    const older = await rowsOf(tree, '/versions/page/1');
    assert.is(newest.length, total - 100);
    assert.is(older.length, 100);
    assert.not.ok(tree.routes.has('/versions/page/2'), 'no page 2 while /versions holds fewer than 200');
    assert.equal(
      [...newest, ...older],
      tree.catalog.versions.map((v) => v.id),
      'every version once, newest first',
    );
    assert.match(await pageHtml(tree, '/versions'), /<a href="\/versions\/page\/1" rel="next">Older versions<\/a>/);
    assert.match(await pageHtml(tree, '/versions/page/1'), /<a href="\/versions" rel="prev">Newer versions<\/a>/);
    assert.match(await pageHtml(tree, '/versions/page/1'), /Versions 1 to 100, counted from the first release,/);
    // A software's own history pages the same way.
    assert.is((await rowsOf(tree, '/versions/papermc/21/page/1')).length, 100);

    // A release: its own page and the pages that list it are rendered, the older page is kept.
    const olderEntry = tree.routes.get('/versions/page/1');
    await addPaperVersion(dataDir, '8.0.0', pluginJar('8.0.0'));
    const released = await build();
    const siteLine = released.lines.find((line) => line.startsWith('[build] site: '))!;
    const rendered = Number(/ (\d+) rendered/.exec(siteLine)?.[1]);
    // The version's page, the history pages of its filters (PaperMC or all, each Java it runs on or
    // all), and the pages that read the whole tree: never the other 245 version pages.
    assert.ok(rendered > 1 && rendered <= 20, siteLine);
    assert.equal(released.tree.routes.get('/versions/page/1'), olderEntry, 'the older page is the same file');
    const id = released.tree.catalog.versions[0]!.id;
    assert.is((await rowsOf(released.tree, '/versions'))[0], id);
    assert.match(await pageHtml(released.tree, `/version/${id}`), /8\.0\.0/);

    // Served: an older page at its address, and the filter's other spellings redirected to it.
    const origin = await startTestOrigin(workspace);
    try {
      assert.is((await fetch(`${origin.url}/versions/page/1`)).status, 200);
      const moved = await fetch(`${origin.url}/versions/all/all/page/1`, { redirect: 'manual' });
      assert.is(moved.status, 301);
      assert.is(moved.headers.get('location'), '/versions/page/1');
      const alias = await fetch(`${origin.url}/versions/paper/21/page/1`, { redirect: 'manual' });
      assert.is(alias.headers.get('location'), '/versions/papermc/21/page/1');
    } finally {
      await origin.close();
    }

    // The tree a release leaves is the one a build from nothing makes, file for file, pages included.
    const incremental = await snapshotTree(released.tree.dir);
    await rm(distDir, { recursive: true, force: true });
    const full = await build();
    const fromNothing = await snapshotTree(full.tree.dir);
    assert.equal(Object.keys(incremental).sort(), Object.keys(fromNothing).sort(), 'the same files');
    for (const file of Object.keys(incremental)) assert.is(incremental[file], fromNothing[file], `${file}: same bytes`);
  } finally {
    await workspace.remove();
  }
});

test.run();
