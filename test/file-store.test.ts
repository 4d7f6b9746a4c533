import { lstat, readFile, readdir, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ENCODING_EXTENSIONS } from '../server/http/compress.ts';
import { currentTreeDir } from '../server/tree/open.ts';
import { type Manifest } from '../server/tree/format.ts';
import { addPaperVersion, buildApi, makeWorkspace, pluginJar, type Workspace } from './helpers.ts';

const ctx = { workspace: undefined as unknown as Workspace };
const store = suite('dist/files: one store of files for every tree');
store.before.each(async () => {
  ctx.workspace = await makeWorkspace();
});
store.after.each(() => ctx.workspace.remove());

const storeNames = async () => new Set(await readdir(join(ctx.workspace.distDir, 'files')));
const build = () => buildApi(ctx.workspace);
const addVersion = (version: string) => addPaperVersion(ctx.workspace.dataDir, version, pluginJar(version));

/** Every file a tree's manifest names, as names in dist/files. */
async function namedFiles(treeDir: string): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(treeDir, 'manifest.json'), 'utf8')) as Manifest;
  return Object.values(manifest.routes).flatMap((entry) => {
    const name = entry.file.slice('files/'.length);
    return [name, ...(entry.encodings ?? []).map((encoding) => `${name}.${ENCODING_EXTENSIONS[encoding]}`)];
  });
}

/** Each route's file as a manifest names it. */
const routeFiles = async (treeDir: string) =>
  new Map(
    Object.entries((JSON.parse(await readFile(join(treeDir, 'manifest.json'), 'utf8')) as Manifest).routes).map(
      ([path, entry]) => [path, entry.file],
    ),
  );

store('a tree links its files to dist/files, and a release adds only the files it changed', async () => {
  const tree = (await currentTreeDir(ctx.workspace.distDir))!;
  assert.ok((await lstat(join(tree, 'files'))).isSymbolicLink(), 'files is a link');
  assert.is(await readlink(join(tree, 'files')), '../../files', 'a relative link: dist/ can move');
  const before = await storeNames();
  const earlier = await routeFiles(tree);
  const sha256 = await addVersion('7.0.0');
  await build();
  const after = await storeNames();
  const added = [...after].filter((name) => !before.has(name));
  assert.ok(added.includes(`${sha256}.jar`), 'the new JAR');
  // Only files of answers that changed are added (with their br and gzip forms), and only answers
  // about versions changed: never a brand image, nor another version's download.
  const changed = [...(await routeFiles((await currentTreeDir(ctx.workspace.distDir))!))].filter(
    ([path, file]) => earlier.get(path) !== file,
  );
  const changedFiles = new Set(changed.map(([, file]) => file.slice('files/'.length)));
  const unexplained = added.filter(
    (name) => name !== `${sha256}.jar` && !changedFiles.has(name.replace(/\.(br|gz)$/, '')),
  );
  assert.equal(unexplained, [], "every new file is a changed answer's");
  const paths = changed.map(([path]) => path);
  assert.equal(
    paths.filter((path) => !/^\/api\/(plugin-versions|badges\/latest)(\/|$|\?)/.test(path)),
    [],
    'only answers about versions changed',
  );
  const downloads = paths.filter((path) => /^\/api\/plugin-versions\/download\/plugin-/.test(path));
  assert.ok(downloads.length > 0, 'the new download');
  assert.equal(
    downloads.filter((path) => !path.includes(sha256.slice(0, 10))),
    [],
    "no other version's download",
  );
  for (const name of await namedFiles((await currentTreeDir(ctx.workspace.distDir))!))
    assert.ok(after.has(name), `${name} is in dist/files`);
});

store('files that no kept tree names are removed after a swap, with what killed builds left', async () => {
  const first = (await currentTreeDir(ctx.workspace.distDir))!;
  const firstOnly = new Set(await namedFiles(first));
  await writeFile(join(ctx.workspace.distDir, 'files', `${'0'.repeat(64)}.json.tmp-4242-abcd`), 'half a file');
  // Three releases: the first tree is pruned (two trees are kept besides the current one).
  for (const version of ['7.1.0', '7.2.0', '7.3.0']) {
    await addVersion(version);
    await build();
  }
  const trees = await readdir(join(ctx.workspace.distDir, 'trees'));
  assert.not.ok(trees.includes(first.split('/').pop()!), 'the first tree is pruned');
  const kept = new Set<string>();
  for (const tree of trees)
    for (const name of await namedFiles(join(ctx.workspace.distDir, 'trees', tree))) kept.add(name);
  for (const name of kept) firstOnly.delete(name);
  assert.ok(firstOnly.size > 0, 'the first tree had answers no later tree has (its version list)');
  const now = await storeNames();
  for (const name of firstOnly) assert.not.ok(now.has(name), `${name}, named only by the pruned tree, is removed`);
  for (const name of kept) assert.ok(now.has(name), `${name}, named by a kept tree, stays`);
  assert.not.ok(
    [...now].some((name) => name.includes('.tmp-')),
    'no temporary file is left',
  );
});

store(
  'a build leaves no file open: the JAR answers it takes from the store without reading them are closed',
  async () => {
    const open = async () => (await readdir('/proc/self/fd')).length;
    await build(); // warm: the store and caches exist
    const before = await open();
    for (const version of ['7.4.0', '7.5.0']) {
      await addVersion(version);
      await build();
    }
    // Each build asks a few hundred JAR answers (download/latest and resolve downloads).
    assert.ok((await open()) - before < 20, `${(await open()) - before} more files open after two builds`);
  },
);

store.run();
