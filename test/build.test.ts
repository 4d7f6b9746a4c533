import { lstat, lutimes, mkdir, readFile, readdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { createApi } from '../server/app.ts';
import { loadCatalog } from '../server/versions/catalog.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import {
  addPaperVersion,
  assertRefusesData,
  pluginJar,
  liveContext,
  makeWorkspace,
  startTestOrigin,
  type Workspace,
  allRoutes,
} from './helpers.ts';
import { templateOf } from './openapi-conformance.ts';

const ctx = {} as { workspace: Workspace };

const build = suite('runBuild');
build.before(async () => {
  ctx.workspace = await makeWorkspace({ site: true });
});
build.after(() => ctx.workspace.remove());

build('same input, same bytes: a second build into another dist/ names the same tree', async () => {
  const first = (await currentTreeDir(ctx.workspace.distDir))!;
  const otherDist = join(ctx.workspace.dir, 'dist2');
  await runBuild({ dataDir: ctx.workspace.dataDir, distDir: otherDist });
  const second = (await currentTreeDir(otherDist))!;
  assert.is(second.split('/').pop(), first.split('/').pop());
  assert.is(
    await readFile(join(second, 'manifest.json'), 'utf8'),
    await readFile(join(first, 'manifest.json'), 'utf8'),
  );
  assert.equal(await readdir(join(second, 'files')), await readdir(join(first, 'files')));
});

build('a JAR is stored once however many URLs serve it', async () => {
  const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const jarRoutes = [...allRoutes(tree.routes).values()].filter((r) => r.file.endsWith('.jar'));
  const jarFiles = (await readdir(join(tree.dir, 'files'))).filter((f) => f.endsWith('.jar'));
  assert.is(jarFiles.length, tree.catalog.versions.length);
  assert.ok(jarRoutes.length > jarFiles.length * 2, `${jarRoutes.length} JAR routes over ${jarFiles.length} files`);
});

build('--if-changed skips a build whose inputs did not change', async () => {
  const result = await runBuild({ dataDir: ctx.workspace.dataDir, distDir: ctx.workspace.distDir, ifChanged: true });
  assert.ok(result.skipped);
});

const invalidCases: [string, (dataDir: string) => Promise<void>, RegExp][] = [
  [
    'an unknown software',
    async (dir) => editFirstRecord(dir, (r) => ({ ...r, serverSoftware: ['PaperMC', 'Forge'] })),
    /versions\/plugin-[^:]+\.json: serverSoftware\[1\]: Unknown server software "Forge"/,
  ],
  [
    'a bad Java version',
    async (dir) => editFirstRecord(dir, (r) => ({ ...r, javaVersion: 22 })),
    /\.json: javaVersion: Unknown Java version 22/,
  ],
  ['a missing field', async (dir) => editFirstRecord(dir, ({ fileName: _omit, ...r }) => r), /\.json: fileName: /],
  [
    'a control character in the file name',
    async (dir) => editFirstRecord(dir, (r) => ({ ...r, fileName: 'a\nb.jar' })),
    /\.json: fileName: must be a file name ending in \.jar, without control characters/,
  ],
  [
    'a size that does not match the JAR',
    async (dir) => editFirstRecord(dir, (r) => ({ ...r, fileSize: 1 })),
    /\.json: fileSize: 1 but .* has \d+ bytes/,
  ],
  [
    'invalid JSON',
    async (dir) => writeFile(join(dir, 'versions', (await readdir(join(dir, 'versions')))[0]!), '{'),
    /\.json: not valid JSON/,
  ],
  [
    'a bad user image URL',
    async (dir) => writeFile(join(dir, 'users.json'), JSON.stringify([{ id: 'u', username: 'u', image: 'ftp://x' }])),
    /users\.json: \[0\]\.image: /,
  ],
];
for (const [name, corrupt, message] of invalidCases) {
  build(`fails naming the file and the field for ${name}`, () => assertRefusesData(corrupt, loadCatalog, message));
}
build.run();

async function editFirstRecord(dataDir: string, edit: (record: Record<string, unknown>) => Record<string, unknown>) {
  const file = join(dataDir, 'versions', (await readdir(join(dataDir, 'versions'))).sort()[0]!);
  await writeFile(file, JSON.stringify(edit(JSON.parse(await readFile(file, 'utf8')))));
}

const parity = suite('parity: static tree == live answer');
parity.before(async () => {
  ctx.workspace = await makeWorkspace({ site: true });
});
parity.after(() => ctx.workspace.remove());

parity('for every manifest route and coding, the file served equals what the origin code renders', async () => {
  const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const context = liveContext(tree);
  const live = Object.assign(createApi(context), { renderer: context.renderer });
  const origin = await startTestOrigin(ctx.workspace);
  let encoded = 0;
  let siteRoutes = 0;
  try {
    assert.ok(allRoutes(tree.routes).size > 700);
    for (const [path, entry] of allRoutes(tree.routes)) {
      if (!templateOf(path)) {
        // The site's pages, scripts and styles: the Astro build is their one implementation.
        siteRoutes++;
        const served = await fetch(origin.url + path, { headers: { 'accept-encoding': 'identity' } });
        assert.ok(
          Buffer.from(await served.arrayBuffer()).equals(await readFile(join(tree.dir, entry.file))),
          `${path}: bytes differ`,
        );
        for (const [name, value] of Object.entries(entry.headers))
          assert.is(served.headers.get(name), value, `${path}: ${name}`);
        continue;
      }
      for (const coding of entry.encodings ? ['identity', ...entry.encodings] : ['identity']) {
        const init = { headers: { 'accept-encoding': coding } };
        const [fromTree, fromCode] = await Promise.all([fetch(origin.url + path, init), live.request(path, init)]);
        // fetch decodes br and gzip itself; the in-process answer comes as it would go on the wire.
        const [treeBytes, rawCodeBytes] = await Promise.all([fromTree.arrayBuffer(), fromCode.arrayBuffer()]);
        const codeBytes = decode(new Uint8Array(rawCodeBytes), fromCode.headers.get('content-encoding'));
        const where = `${path} (${coding})`;
        assert.is(fromTree.status, fromCode.status, where);
        assert.is(fromTree.status, entry.status, where);
        assert.ok(Buffer.from(treeBytes).equals(codeBytes), `${where}: bytes differ`);
        for (const name of [
          'content-type',
          'content-disposition',
          'cache-control',
          'etag',
          'accept-ranges',
          'content-encoding',
          'vary',
        ]) {
          assert.is(fromTree.headers.get(name), fromCode.headers.get(name), `${where}: ${name}`);
        }
        if (coding === 'identity') {
          // Content-Length is the transport's: in-process answers have none, so check it against the bytes.
          assert.is(Number(fromTree.headers.get('content-length')), codeBytes.byteLength, `${where}: content-length`);
        } else {
          assert.is(fromTree.headers.get('content-encoding'), coding, where);
          encoded++;
        }
      }
    }
    assert.ok(encoded >= 6, `${encoded} compressed answers compared`);
    assert.ok(siteRoutes > 50, `${siteRoutes} site routes compared`);
    assert.ok(live.renderer.renders() > 400, `${live.renderer.renders()} images rendered live`);
  } finally {
    await origin.close();
  }
});

function decode(bytes: Uint8Array, coding: string | null): Buffer {
  if (coding === 'br') return brotliDecompressSync(bytes);
  if (coding === 'gzip') return gunzipSync(bytes);
  return Buffer.from(bytes);
}

parity('a removed tree file is not silently replaced: the origin answers 500 JSON, not a crash', async () => {
  const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const entry = tree.routes.get('/api/plugin-versions')!;
  await rm(join(tree.dir, entry.file));
  const origin = await startTestOrigin(ctx.workspace);
  try {
    const response = await fetch(`${origin.url}/api/plugin-versions`, { headers: { 'accept-encoding': 'identity' } });
    assert.is(response.status, 500);
    assert.equal(await response.json(), { error: 'Internal server error' });
  } finally {
    await origin.close();
  }
});
parity.run();

// Issue 42 item 4: a build removes from dist/trees and dist/files only what it made there (trees
// and content-addressed files, by their names); a file or link of someone else's stays, and a
// link's target is never followed.
const cleaning = suite("the build's clean-up");
cleaning('leaves a foreign file and a symbolic link in dist/trees and dist/files untouched', async () => {
  const workspace = await makeWorkspace();
  try {
    const outside = join(workspace.dir, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'keep.txt'), 'keep');
    const planted: string[] = [];
    for (const folder of ['trees', 'files']) {
      const notes = join(workspace.distDir, folder, 'notes.txt');
      const link = join(workspace.distDir, folder, 'elsewhere');
      await writeFile(notes, 'mine');
      await symlink(outside, link);
      // Older than any tree: the first a pruning by age would take.
      await utimes(notes, new Date('2020-01-01'), new Date('2020-01-01'));
      await lutimes(link, new Date('2020-01-01'), new Date('2020-01-01'));
      planted.push(notes, link);
    }
    for (const version of ['42.4.0', '42.4.1', '42.4.2']) {
      await addPaperVersion(workspace.dataDir, version, pluginJar(version));
      await runBuild({ dataDir: workspace.dataDir, distDir: workspace.distDir, site: false });
    }
    for (const path of planted) assert.ok((await lstat(path).catch(() => null)) !== null, `${path} is still there`);
    assert.is(await readFile(join(outside, 'keep.txt'), 'utf8'), 'keep');
    // The build's own older trees were pruned as before: the current one and two previous.
    const trees = (await readdir(join(workspace.distDir, 'trees'))).filter((name) => /^[0-9a-f]{20}$/.test(name));
    assert.is(trees.length, 3, trees.join(', '));
  } finally {
    await workspace.remove();
  }
});
cleaning.run();
