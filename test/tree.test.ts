import { cp, mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CURRENT_LINK, TREES_DIR } from '../server/tree/format.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { followCurrentTree } from '../server/tree/follow.ts';
import { DataError } from '../server/data-files.ts';
import { manifestText, splitManifest } from '../server/tree/manifest-text.ts';
import { allRoutes, makeWorkspace, until, type Workspace } from './helpers.ts';

const ctx = {} as { workspace: Workspace };

/** Points dist/current at `trees/<name>` the way the build does: a new link renamed over the old one. */
async function pointAt(name: string) {
  const temporary = join(ctx.workspace.distDir, `${CURRENT_LINK}.${name}.tmp`);
  await symlink(join(TREES_DIR, name), temporary);
  await rename(temporary, join(ctx.workspace.distDir, CURRENT_LINK));
}

async function brokenTree(name: string) {
  await mkdir(join(ctx.workspace.distDir, TREES_DIR, name), { recursive: true });
  await writeFile(join(ctx.workspace.distDir, TREES_DIR, name, 'manifest.json'), '{"format": 2');
}

const follow = suite('followCurrentTree');
follow.before(async () => {
  ctx.workspace = await makeWorkspace();
});
follow.after(() => ctx.workspace.remove());

follow(
  'a tree that fails to open is said once, then at most once a minute; another tree is tried at once',
  async () => {
    const good = (await currentTreeDir(ctx.workspace.distDir))!;
    let time = Date.parse('2026-11-23T12:00:00Z');
    const said: string[] = [];
    const follower = followCurrentTree(ctx.workspace.distDir, await openTree(good), (_error, dir) => said.push(dir), {
      intervalMs: 10,
      now: () => time,
    });
    try {
      await brokenTree('broken-1');
      await pointAt('broken-1');
      await until(() => said.length > 0, 'the broken tree was reported');
      await new Promise((resolve) => setTimeout(resolve, 400)); // some 40 polls
      assert.equal(said, [join(ctx.workspace.distDir, TREES_DIR, 'broken-1')]);
      assert.is(follower.current().dir, good, 'still serving the previous tree');
      time += 61_000;
      await until(() => said.length === 2, 'reported again a minute later');
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.is(said.length, 2);
      await brokenTree('broken-2');
      await pointAt('broken-2');
      await until(() => said.length === 3, 'another broken tree is reported at once');
      assert.is(said[2], join(ctx.workspace.distDir, TREES_DIR, 'broken-2'));
      // A good tree is picked up without waiting for the back-off of the broken one.
      await cp(good, join(ctx.workspace.distDir, TREES_DIR, 'good-copy'), { recursive: true });
      await pointAt('good-copy');
      await until(
        () => follower.current().dir === join(ctx.workspace.distDir, TREES_DIR, 'good-copy'),
        'the good tree is served',
      );
      assert.is(said.length, 3);
    } finally {
      follower.stop();
    }
  },
);
follow.run();

/** A copy of the current tree named `name`, its manifest and catalog changed by `edit`. */
async function editedTree(name: string, edit: (manifest: any, catalog: any) => void) {
  const dir = join(ctx.workspace.distDir, TREES_DIR, name);
  await cp((await currentTreeDir(ctx.workspace.distDir))!, dir, { recursive: true });
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
  const catalog = JSON.parse(await readFile(join(dir, 'catalog.json'), 'utf8'));
  edit(manifest, catalog);
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
  await writeFile(join(dir, 'catalog.json'), JSON.stringify(catalog));
  return dir;
}

const isDataError = (error: unknown) => error instanceof DataError;

const open = suite('openTree');
open.before(async () => {
  ctx.workspace = await makeWorkspace();
});
open.after(() => ctx.workspace.remove());

open('routes are validated when looked up: a bad one throws DataError naming it, the others are answered', async () => {
  const dir = await editedTree('bad-route', (manifest) => {
    manifest.routes['/api/plugin-versions'].file = '../../etc/passwd';
  });
  const tree = await openTree(dir);
  const error = (() => {
    try {
      tree.routes.get('/api/plugin-versions');
    } catch (error) {
      return error;
    }
  })();
  assert.instance(error, DataError);
  assert.match((error as Error).message, 'routes["/api/plugin-versions"]: file');
  assert.throws(() => tree.routes.get('/api/plugin-versions'), isDataError, 'and again on the next lookup');
  assert.is(tree.routes.get('/api/plugin-versions/latest/papermc')?.status, 200);
  assert.is(tree.routes.get('/nowhere'), undefined);
  assert.throws(() => [...allRoutes(tree.routes).values()], isDataError, 'iterating validates every route');
});

open('a manifest whose head is wrong does not open', async () => {
  for (const [name, edit] of [
    ['format-2', (manifest: any) => (manifest.format = 2)],
    ['routes-array', (manifest: any) => (manifest.routes = [])],
    ['no-source', (manifest: any) => delete manifest.source],
  ] as const) {
    const dir = await editedTree(name, edit);
    await openTree(dir).then(
      () => assert.unreachable(`${name} opened`),
      (error: unknown) => assert.instance(error, DataError, name),
    );
  }
});

open('catalog.json is validated when the catalog is first used; its error is given to every use', async () => {
  const dir = await editedTree('bad-catalog', (_manifest, catalog) => {
    catalog.versions[0].pluginVersion = 'one';
  });
  const tree = await openTree(dir);
  assert.throws(() => tree.catalog, /catalog\.json: versions\[0\]\.pluginVersion/);
  assert.throws(() => tree.brands, isDataError);
  const good = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  assert.ok(good.catalog.versions.length > 0);
  assert.is(good.catalog, good.catalog, 'made once');
  assert.ok(good.brands.size > 0);
});
open('a catalog reuses the versions the previous tree validated when they are equal, and only then', async () => {
  const previous = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const [first, second] = previous.catalog.versions;
  const renamed = await editedTree('renamed', (_manifest, catalog) => {
    catalog.versions.find((v: { id: string }) => v.id === first!.id).fileName = 'Renamed.jar';
  });
  const next = await openTree(renamed, previous);
  assert.is(next.catalog.byId.get(second!.id), second, 'an unchanged version is the one validated before');
  assert.is(next.catalog.byId.get(first!.id)?.fileName, 'Renamed.jar', 'a changed one is read from the new tree');
  const invalid = await editedTree('same-id-invalid', (_manifest, catalog) => {
    catalog.versions.find((v: { id: string }) => v.id === second!.id).serverSoftware = ['NoSuchServer'];
  });
  const tree = await openTree(invalid, previous);
  assert.throws(() => tree.catalog, /versions\[\d+\]\.serverSoftware\[0\]: Unknown server software "NoSuchServer"/);
});
open('a tree replaced before its catalog was made passes on the catalog it would have reused', async () => {
  const made = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const [version] = made.catalog.versions;
  // Releases in a row: the middle tree is replaced before anything asks for its catalog.
  const middle = await openTree(await editedTree('middle', () => {}), made);
  const last = await openTree(await editedTree('last', () => {}), middle);
  assert.is(last.catalog.byId.get(version!.id), version, 'the version validated two trees back, not validated again');
});
open("the build's manifest is one route a line: split into the entries JSON.parse reads, unparsed", async () => {
  const dir = (await currentTreeDir(ctx.workspace.distDir))!;
  const text = await readFile(join(dir, 'manifest.json'), 'utf8');
  assert.ok(text.split('\n', 1)[0]!.endsWith(',"routes":{'), 'the head is the first line');
  const whole = JSON.parse(text) as { format: number; source: string; routes: Record<string, unknown> };
  const { head, routes } = splitManifest(text, 'manifest.json');
  assert.equal(head, { format: whole.format, source: whole.source });
  assert.equal([...routes.keys()], Object.keys(whole.routes));
  for (const [path, entry] of routes) {
    assert.type(entry, 'string', path);
    assert.equal(JSON.parse(entry as string), whole.routes[path], path);
  }
});

open('manifest lines survive paths with quotes, escapes and commas; a cut manifest is a DataError', () => {
  const routes: [string, { n: number } | string][] = [
    ['/a"b\\c', { n: 1 }],
    ['/line\nbreak,"x":1', '{"n":2}'],
    ['/é/🙂', { n: 3 }],
  ];
  const text = manifestText({ format: 1, source: 's' }, routes);
  const split = splitManifest(text, 'm');
  assert.equal(JSON.parse(text).routes, { '/a"b\\c': { n: 1 }, '/line\nbreak,"x":1': { n: 2 }, '/é/🙂': { n: 3 } });
  assert.equal(
    [...split.routes.keys()],
    routes.map(([path]) => path),
  );
  assert.equal(split.routes.get('/line\nbreak,"x":1'), '{"n":2}');
  assert.throws(() => splitManifest(text.slice(0, text.indexOf('\n') + 8), 'm'), isDataError);
});

open.run();
