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
import { currentTreeDir } from '../server/tree/open.ts';
import {
  addPaperVersion,
  allRoutes,
  buildApi,
  pluginJar,
  rawRequest,
  makeWorkspace,
  runDepot,
  snapshotFiles,
  startTestOrigin,
  type Workspace,
} from './helpers.ts';
import { openTree } from '../server/tree/open.ts';
import { startStaticHost, type HostKind } from './static-host.ts';

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
  const tree = await openTree((await currentTreeDir(workspace.distDir))!, undefined, () => {});
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
  return paths.length;
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
      assert.ok((await assertServesAsOrigin(ctx.workspace, ctx.exportDir, kind)) === answer.files);
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
