import { lstat, readFile, readlink, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeLargeData } from '../bench/large-data.ts';
import {
  CLOUDFLARE_PAGES_CAPS,
  staticLayoutConfigs,
  staticLayoutRuleCounts,
  treeStaticRuleCounts,
} from '../build/static-layout-configs.ts';
import { mediaType } from '../build/static-layout.ts';
import { runBuild } from '../build/build.ts';
import { HISTORY_SEGMENTS } from '../server/pages.ts';
import { NOT_FOUND_PAGE, type RouteEntry } from '../server/tree/format.ts';
import { currentTreeDir } from '../server/tree/open.ts';
import {
  addPaperVersion,
  allRoutes,
  buildApi,
  pluginJar,
  rawRequest,
  SHARED_BUILD_CACHE,
  makeWorkspace,
  runDepot,
  snapshotFiles,
  startTestOrigin,
  type Workspace,
} from './helpers.ts';
import { openTree } from '../server/tree/open.ts';
import { startStaticHost, type HostKind } from './static-host.ts';
import { NO_LOG } from '../server/helpers/log.ts';

/** Headers a static host sends itself, or cannot send per path (docs/deployment.md, Static hosts). */
const HOST_OWN = [
  'etag',
  'repr-digest',
  'content-location',
  'vary',
  'accept-ranges',
  'transfer-encoding',
  'content-length',
  'content-encoding',
  'date',
  'connection',
  'keep-alive',
];

/**
 * Every precomputed 200 answer without a query, through the export on a host of `kind`: the
 * origin's bytes and media type, and every header a `_headers` rule gives it is the origin's.
 */
async function assertServesAsOrigin(workspace: Workspace, exportDir: string, kind: HostKind) {
  const tree = await openTree((await currentTreeDir(workspace.distDir))!, undefined, NO_LOG);
  const paths = [...allRoutes(tree.routes)].filter(([path, entry]) => entry.status === 200 && !path.includes('?'));
  const configs = staticLayoutConfigs(Object.fromEntries(paths), 'http://localhost:3000');
  const templates = new Map(configs.files.map((file) => [file.path, file.template]));
  const origin = await startTestOrigin(workspace, { rateLimit: { limit: 1_000_000, windowSeconds: 900 } });
  const host = await startStaticHost(exportDir, kind);
  try {
    for (const [path, entry] of paths) {
      // The host's answers are not the depot's: they lack what no host carries per path (ETag,
      // Content-Disposition), so they are read without the OpenAPI check fetch makes.
      const [fromOrigin, fromHost] = await Promise.all([
        fetch(`${origin.url}${path}`),
        rawRequest(`${host.url}${path}`),
      ]);
      assert.is(fromHost.status, 200, `${kind} ${path}`);
      const expected = Buffer.from(await fromOrigin.arrayBuffer());
      assert.ok(expected.equals(fromHost.body), `${kind} ${path}: bytes`);
      const type = fromOrigin.headers.get('content-type')!;
      assert.is(mediaType(String(fromHost.headers['content-type'])), mediaType(type), `${kind} ${path}: content type`);
      for (const [name, value] of Object.entries(fromHost.headers))
        if (!HOST_OWN.includes(name) && name !== 'content-type')
          assert.is(value, fromOrigin.headers.get(name), `${kind} ${path}: ${name}`);
      // What the host leaves out is its own or listed as not carried (docs/deployment.md).
      const allowed = configs.notCarried.get(templates.get(path)!) ?? new Set();
      // The precomputed answer's headers: the origin adds its rate limit's, which no static host has.
      for (const name of Object.keys(entry.headers))
        if (!(name in fromHost.headers))
          assert.ok(HOST_OWN.includes(name) || allowed.has(name), `${kind} ${path}: ${name} missing`);
    }
  } finally {
    await host.close();
    await origin.close();
  }
  return paths.map(([path]) => path);
}

const demo = suite('export-static: the demo tree on a static host');
const ctx = {} as { workspace: Workspace; exportDir: string };
demo.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.exportDir = join(ctx.workspace.dir, 'public');
});
demo.after(() => ctx.workspace.remove());

demo(
  'every precomputed path answers the origin bytes and type, as Netlify and Cloudflare Pages apply the rules',
  async () => {
    const exported = await runDepot(['export-static', ctx.exportDir], ctx.workspace);
    assert.is(exported.code, 0, exported.stderr);
    const answer = JSON.parse(exported.stdout) as { files: number; counts: { redirects: number } };
    assert.ok(answer.files > 100, 'files');
    for (const kind of ['netlify', 'cloudflare'] as const)
      assert.ok((await assertServesAsOrigin(ctx.workspace, ctx.exportDir, kind)).length === answer.files);
  },
);

demo('a second export of the same tree changes nothing; a new tree swaps in whole and the old one goes', async () => {
  const before = await snapshotFiles(ctx.exportDir);
  const again = await runDepot(['export-static', ctx.exportDir], ctx.workspace);
  assert.is(again.code, 0, again.stderr);
  assert.is(JSON.parse(again.stdout).unchanged, true);
  assert.equal(await snapshotFiles(ctx.exportDir), before);
  const firstTarget = await readlink(ctx.exportDir);
  await addPaperVersion(ctx.workspace.dataDir, '9.9.9', pluginJar('9.9.9'));
  await buildApi(ctx.workspace);
  const next = await runDepot(['export-static', ctx.exportDir], ctx.workspace);
  assert.is(next.code, 0, next.stderr);
  const exports = await readdir(`${ctx.exportDir}.exports`);
  assert.is(exports.length, 1, 'one export kept');
  assert.ok((await lstat(ctx.exportDir)).isSymbolicLink());
  assert.is(JSON.parse(next.stdout).unchanged, false);
  assert.is.not(await readlink(ctx.exportDir), firstTarget);
  const tree = (await currentTreeDir(ctx.workspace.distDir))!.split('/').pop()!;
  assert.equal(exports, [tree], 'the new tree, the old export removed');
});

demo('refuses a folder it did not write, and a missing folder argument, writing nothing', async () => {
  const taken = join(ctx.workspace.dir, 'taken');
  await writeFile(taken, 'mine');
  const refused = await runDepot(['export-static', taken], ctx.workspace);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /taken exists and is not an export/);
  assert.is(await readFile(taken, 'utf8'), 'mine');
  const none = await runDepot(['export-static'], ctx.workspace);
  assert.is(none.code, 1);
  assert.match(none.stderr, /export-static <dir>/);
  await rm(taken);
});
demo.run();

const sizes = suite('export-static: rule counts do not grow with versions');
sizes(
  '100 and 1,000 versions: the same counts, under Cloudflare Pages caps; 100 versions served as the origin',
  async () => {
    const counts = [];
    for (const count of [100, 1000]) {
      const workspace = await makeWorkspace({ build: false });
      try {
        await rm(workspace.dataDir, { recursive: true, force: true });
        await writeLargeData(workspace.dataDir, count);
        await buildApi(workspace);
        counts.push(await treeStaticRuleCounts((await currentTreeDir(workspace.distDir))!));
        if (count === 100) {
          const exportDir = join(workspace.dir, 'public');
          const exported = await runDepot(['export-static', exportDir], workspace);
          assert.is(exported.code, 0, exported.stderr);
          assert.equal(await staticLayoutRuleCounts(exportDir), counts[0]);
          await assertServesAsOrigin(workspace, exportDir, 'cloudflare');
        }
      } finally {
        await workspace.remove();
      }
    }
    assert.equal(counts[0], counts[1]);
    assert.ok(counts[1]!.staticRedirects <= CLOUDFLARE_PAGES_CAPS.staticRedirects);
    assert.ok(counts[1]!.dynamicRedirects <= CLOUDFLARE_PAGES_CAPS.dynamicRedirects);
    assert.ok(counts[1]!.headers <= CLOUDFLARE_PAGES_CAPS.headers);
  },
);
sizes.run();

/** Demo data plus this many PaperMC versions on Java 21: past two history pages of 100, so older pages exist. */
const SITE_VERSIONS = 250;

const site = suite('export-static: the site on a static host (history pages, version pages, 404)');
const withSite = {} as { workspace: Workspace; exportDir: string; routes: Record<string, RouteEntry> };
site.before(async () => {
  withSite.workspace = await makeWorkspace({ build: false, site: true });
  for (let index = 0; index < SITE_VERSIONS; index++)
    await addPaperVersion(withSite.workspace.dataDir, `5.0.${index}`, pluginJar(`5.0.${index}`));
  const { dataDir, distDir } = withSite.workspace;
  await runBuild({ dataDir, distDir, cacheDir: SHARED_BUILD_CACHE, site: true });
  withSite.exportDir = join(withSite.workspace.dir, 'public');
  const exported = await runDepot(['export-static', withSite.exportDir], withSite.workspace);
  assert.is(exported.code, 0, exported.stderr);
  const tree = await openTree((await currentTreeDir(distDir))!, undefined, NO_LOG);
  withSite.routes = Object.fromEntries(allRoutes(tree.routes));
});
site.after(() => withSite.workspace.remove());

site('every page, older history pages and version pages included, answers the origin bytes and type', async () => {
  for (const kind of ['netlify', 'cloudflare'] as const) {
    const served = await assertServesAsOrigin(withSite.workspace, withSite.exportDir, kind);
    for (const page of ['/', '/versions', '/versions/page/1', '/versions/papermc/21/page/1', '/versions/all/21'])
      assert.ok(served.includes(page), `${page} is served`);
    assert.ok(served.filter((path) => path.startsWith('/version/')).length > SITE_VERSIONS, 'version pages');
  }
});

site("a path with no file is the site's 404 page, status 404, on both hosts", async () => {
  const page = await readFile(
    join((await currentTreeDir(withSite.workspace.distDir))!, withSite.routes[NOT_FOUND_PAGE]!.file),
  );
  for (const kind of ['netlify', 'cloudflare'] as const) {
    const host = await startStaticHost(withSite.exportDir, kind);
    try {
      for (const path of ['/nope', '/versions/page/999', '/version/plugin-0-missing']) {
        const answer = await rawRequest(`${host.url}${path}`);
        assert.is(answer.status, 404, `${kind} ${path}`);
        assert.ok(answer.body.equals(page), `${kind} ${path}: the 404 page`);
      }
    } finally {
      await host.close();
    }
  }
});

site('the /versions/ aliases redirect as the origin does, to pages the host serves', async () => {
  const origin = await startTestOrigin(withSite.workspace, { rateLimit: { limit: 1_000_000, windowSeconds: 900 } });
  const sources = HISTORY_SEGMENTS.flatMap((segment) => [
    `/versions/${segment}`,
    `/versions/${segment}/21`,
    `/versions/${segment}/21/page/1`,
  ]);
  let followed = 0;
  try {
    for (const kind of ['netlify', 'cloudflare'] as const) {
      const host = await startStaticHost(withSite.exportDir, kind);
      try {
        for (const path of sources) {
          const atOrigin = await fetch(`${origin.url}${path}`, { redirect: 'manual' });
          await atOrigin.arrayBuffer();
          const atHost = await rawRequest(`${host.url}${path}`);
          if (atOrigin.status !== 301) {
            // Canonical already (/versions/papermc/21): the page itself, or the 404 page for a filter without one.
            assert.is(atHost.status, atOrigin.status, `${kind} ${path}`);
            continue;
          }
          assert.is(atHost.status, 301, `${kind} ${path}`);
          const location = atOrigin.headers.get('location')!;
          assert.is(atHost.headers.location, location, `${kind} ${path}: Location`);
          const [landed, expected] = await Promise.all([
            rawRequest(`${host.url}${location}`),
            fetch(`${origin.url}${location}`).then(async (r) => ({
              status: r.status,
              body: Buffer.from(await r.arrayBuffer()),
            })),
          ]);
          assert.is(landed.status, expected.status, `${kind} ${path} -> ${location}`);
          assert.ok(landed.body.equals(expected.body), `${kind} ${path} -> ${location}: bytes`);
          if (landed.status === 200) followed++;
        }
      } finally {
        await host.close();
      }
    }
  } finally {
    await origin.close();
  }
  assert.ok(followed >= 2 * 3 * 5, `${followed} redirects landed on pages`);
});

site('more versions and history pages add no rule', async () => {
  const counts = await staticLayoutRuleCounts(withSite.exportDir);
  const grown = { ...withSite.routes };
  // As a catalog ten times larger: more older history pages per filter, more version pages.
  for (const [path, entry] of Object.entries(withSite.routes)) {
    const archive = /^(.*\/page\/)1$/.exec(path);
    if (archive) for (let page = 2; page <= 25; page++) grown[`${archive[1]}${page}`] = entry;
    if (/^\/version\/[^/]+$/.test(path)) for (let copy = 0; copy < 9; copy++) grown[`${path}${copy}`] = entry;
  }
  const added = Object.keys(grown).length - Object.keys(withSite.routes).length;
  assert.ok(added > 2000, `${added} pages added`);
  assert.equal(staticLayoutConfigs(grown, 'http://localhost:3000').counts, counts);
  assert.ok(counts.staticRedirects <= CLOUDFLARE_PAGES_CAPS.staticRedirects);
  assert.ok(counts.dynamicRedirects <= CLOUDFLARE_PAGES_CAPS.dynamicRedirects);
  assert.ok(counts.headers <= CLOUDFLARE_PAGES_CAPS.headers);
});
site.run();
