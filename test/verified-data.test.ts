import { cp, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { VERIFIED_DATA, openVerifiedData, type RememberedKind, type RememberedValues } from '../build/verified-data.ts';
import { DataError } from '../server/data-files.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import type { DataFileMemory } from '../server/data-file-memory.ts';
import { loadCatalog } from '../server/versions/catalog.ts';
import { ROOT } from './helpers.ts';
import { loadBrandSources } from '../server/brands/sources.ts';
import { answerCodeDigest } from '../build/source-files.ts';
import { digestSources } from '../build/source-files.ts';
import sharp from 'sharp';

const ctx = {} as { dir: string; dataDir: string; cacheFile: string };

/** Later than the settle window after any file the test writes: everything read is remembered. */
const settled = () => Date.now() + 60_000;

/** One load through the cache, as the build's load step does it; returns what was read from data/ rather than recalled. */
async function load(now: () => number = settled) {
  const opened = await openVerifiedData(ctx.cacheFile, ctx.dataDir, now);
  const read: Record<RememberedKind, string[]> = { jars: [], records: [], changelogs: [], brands: [], sources: [] };
  // Every file not recalled is read; its value is offered to `remember` (kept only once settled).
  const memory: DataFileMemory<RememberedValues> = {
    recall: (kind, name, file) => opened.memory.recall(kind, name, file),
    remember(kind, name, file, value) {
      read[kind].push(name);
      opened.memory.remember(kind, name, file, value);
    },
  };
  const catalog = await loadCatalog(ctx.dataDir, memory);
  const brands = await loadBrandSources(ctx.dataDir, memory);
  const code = await answerCodeDigest(memory);
  await opened.save();
  for (const names of Object.values(read)) names.sort();
  return { catalog, brands, code, read };
}

const NOTHING_READ = { jars: [], records: [], changelogs: [], brands: [], sources: [] };

const recordFile = (id: string) => join(ctx.dataDir, 'versions', `${id}.json`);

/** The same text with one character of a field changed: same size, new content. */
async function editInPlace(file: string, from: string, to: string) {
  const text = await readFile(file, 'utf8');
  assert.is(from.length, to.length);
  assert.ok(text.includes(from), `${file} holds ${from}`);
  await writeFile(file, text.replace(from, to));
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error,
  );

const memory = suite('loadCatalog with the build cache (verified-data.json)');
memory.before.each(async () => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'depot-verified-'));
  ctx.dataDir = join(ctx.dir, 'data');
  ctx.cacheFile = join(ctx.dir, 'cache', VERIFIED_DATA);
  await cp(join(ROOT, 'data'), ctx.dataDir, { recursive: true });
});
memory.after.each(() => rm(ctx.dir, { recursive: true, force: true }));

memory('a second load reads no file of data/ and gives the same catalog', async () => {
  const first = await load();
  assert.ok(first.read.records.length > 5, 'the first load reads every record');
  assert.is(first.read.records.length, first.catalog.versions.length);
  assert.is(first.read.jars.length, first.catalog.versions.length);
  assert.ok(first.read.changelogs.length >= 1, 'and every changelog');
  assert.ok(first.read.brands.length >= 10, 'and decodes every brand source');
  const second = await load();
  assert.equal(second.read, NOTHING_READ);
  assert.equal(second.catalog, first.catalog);
  assert.equal(second.catalog, await loadCatalog(ctx.dataDir));
  assert.equal(
    second.brands,
    await loadBrandSources(ctx.dataDir),
    'the same brand sources as a load without the cache',
  );
  assert.ok(first.read.sources.includes('server/app.ts'), "and hashes the build's sources");
  assert.is(second.code, await answerCodeDigest(), 'the same digest of the code as without the cache');
});

memory('a source edited in place (same size) changes the digest, as without the cache', async () => {
  const source = join(ctx.dir, 'source.ts');
  await writeFile(source, 'export const answer = 41;\n');
  const opened = await openVerifiedData(ctx.cacheFile, ctx.dataDir, settled);
  const first = await digestSources('test', [source], opened.memory);
  await writeFile(source, 'export const answer = 42;\n');
  const second = await digestSources('test', [source], opened.memory);
  assert.is.not(second, first);
  assert.is(second, await digestSources('test', [source]));
});

memory('a brand source replaced by another image is decoded again', async () => {
  const { brands } = await load();
  const folia = brands.find((source) => source.brand === 'folia')!;
  const file = join(ctx.dataDir, 'brands', 'folia', 'default.png');
  // The same picture at another size: other bytes, other dimensions.
  await writeFile(file, await sharp(folia.bytes).resize({ width: 1200 }).png().toBuffer());
  const again = await load();
  assert.equal(again.read.brands, ['folia/default.png']);
  assert.is(again.brands.find((source) => source.brand === 'folia')!.width, 1200);
});

memory('a record edited in place (same size, new content) is read again', async () => {
  const { catalog } = await load();
  const version = catalog.versions.find((v) => v.createdBy === 'alice')!;
  await editInPlace(recordFile(version.id), '"createdBy": "alice"', '"createdBy": "carol"');
  const again = await load();
  assert.equal(again.read.records, [`${version.id}.json`]);
  assert.is(again.catalog.byId.get(version.id)!.createdBy, 'carol');
});

memory('a changelog edited in place is read again', async () => {
  const { catalog } = await load();
  const version = catalog.versions.find((v) => v.changelog !== undefined)!;
  const file = join(ctx.dataDir, 'versions', `${version.id}.md`);
  const text = await readFile(file, 'utf8');
  await writeFile(file, `X${text.slice(1)}`);
  const again = await load();
  assert.equal(again.read.changelogs, [`${version.id}.md`]);
  assert.is(again.catalog.byId.get(version.id)!.changelog, `X${text.slice(1)}`);
});

memory('a file read within the settle window is not remembered: the next load reads it again', async () => {
  const { catalog } = await load();
  const version = catalog.versions[0]!;
  await editInPlace(recordFile(version.id), '"createdBy": "alice"', '"createdBy": "carol"');
  const { mtimeMs } = await stat(recordFile(version.id));
  // Racily clean: read just after it changed, it might change again with the same times.
  const racy = await load(() => mtimeMs + 500);
  assert.equal(racy.read.records, [`${version.id}.json`]);
  const next = await load();
  assert.equal(next.read.records, [`${version.id}.json`], 'read again, then remembered');
  assert.is(next.catalog.byId.get(version.id)!.createdBy, 'carol');
  assert.equal((await load()).read.records, []);
});

memory('a record replaced by an invalid one fails the load with the file named, as without the cache', async () => {
  const { catalog } = await load();
  const version = catalog.versions.find((v) => v.javaVersion === '21')!;
  const text = await readFile(recordFile(version.id), 'utf8');
  await rm(recordFile(version.id));
  await writeFile(recordFile(version.id), text.replace('"javaVersion": "21"', '"javaVersion": "29"'));
  const without = await failure(loadCatalog(ctx.dataDir));
  assert.instance(without, DataError);
  assert.match((without as Error).message, `${version.id}.json: javaVersion`);
  const withCache = await failure(load());
  assert.instance(withCache, DataError);
  assert.is((withCache as Error).message, (without as Error).message);
});

for (const [what, corrupt] of [
  ['not JSON', () => 'garbage'],
  ['another format', (text: string) => text.replace(/^\{"format":\d+/, '{"format":1')],
  [
    'a body that does not match its digest',
    (text: string) => text.replace('"createdBy":"alice"', '"createdBy":"eve00"'),
  ],
  ['cut short', (text: string) => text.slice(0, text.length / 2)],
] as const) {
  memory(`a cache file that is ${what} is ignored: every file is read again`, async () => {
    const first = await load();
    const text = await readFile(ctx.cacheFile, 'utf8');
    const changed = corrupt(text);
    assert.is.not(changed, text);
    await writeFile(ctx.cacheFile, changed);
    const again = await load();
    assert.equal(again.read, first.read);
    assert.equal(again.catalog, first.catalog);
  });
}

memory('another data/ folder sharing the cache keeps its entries', async () => {
  await load();
  const otherData = join(ctx.dir, 'other-data');
  await cp(ctx.dataDir, otherData, { recursive: true });
  const other = await openVerifiedData(ctx.cacheFile, otherData, settled);
  await loadCatalog(otherData, other.memory);
  await other.save();
  assert.equal((await load()).read, NOTHING_READ);
});
memory.run();

const served = suite('a build after a record was edited in place');
served.before.each(async () => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'depot-verified-'));
  ctx.dataDir = join(ctx.dir, 'data');
  await cp(join(ROOT, 'data'), ctx.dataDir, { recursive: true });
});
served.after.each(() => rm(ctx.dir, { recursive: true, force: true }));

served('serves the change', async () => {
  const distDir = join(ctx.dir, 'dist');
  const cacheDir = join(ctx.dir, 'cache');
  // Past the settle window, so that the first build remembers every record.
  await new Promise((resolve) => setTimeout(resolve, 2100));
  await runBuild({ dataDir: ctx.dataDir, distDir, cacheDir, site: false });
  const id = (await readdir(join(ctx.dataDir, 'versions'))).find((name) => name.endsWith('.json'))!.slice(0, -5);
  await editInPlace(recordFile(id), '"updatedAt": "20', '"updatedAt": "21');
  await runBuild({ dataDir: ctx.dataDir, distDir, cacheDir, site: false });
  const tree = await openTree((await currentTreeDir(distDir))!);
  assert.match(tree.catalog.byId.get(id)!.updatedAt, /^21/);
  const list = tree.routes.get('/api/plugin-versions')!;
  assert.match(await readFile(join(tree.dir, list.file), 'utf8'), /"updatedAt":"21/);
});
served.run();
