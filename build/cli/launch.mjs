// @ts-check
// `npm run depot` starts here, in plain JavaScript: loading depot.ts and the ~250 modules a release
// needs through tsx takes over a second, an esbuild bundle of them about a third of that. The bundle
// lives in node_modules/.cache/depot-cli/ and is rebuilt whenever one of its inputs changed, so the
// CLI always runs the sources as they are.
import { createHash } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '../..');
const ENTRY = join(ROOT, 'build/cli/depot.ts');
const CACHE_DIR = join(ROOT, 'node_modules/.cache/depot-cli');
const STAMP = join(CACHE_DIR, 'stamp.json');
/** In each bundle's folder, one empty file per process running it, named by its pid. */
const USERS = '.users';
/** Besides the bundle's own inputs: this file, and npm's record of what is installed. */
const ALSO_CHECKED = ['build/cli/launch.mjs', 'node_modules/.package-lock.json'];

/** @type {import('esbuild').BuildOptions} */
const OPTIONS = {
  entryPoints: { depot: 'build/cli/depot.ts' },
  absWorkingDir: ROOT,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Each command's modules in their own chunk, loaded when it runs: `depot` alone starts in half the time.
  splitting: true,
  // Never written (write: false), but at the depth of the build-* folders: the source maps' paths hold.
  outdir: join(CACHE_DIR, 'out'),
  write: false,
  metafile: true,
  keepNames: true,
  // An uncaught error's stack names the sources' lines, as under tsx (process.setSourceMapsEnabled below).
  sourcemap: 'linked',
  sourcesContent: false,
  // sharp is native, Astro runs Vite on site/ from its own files, ioredis reads its package.json
  // through __dirname: imported from node_modules as they are.
  external: ['sharp', 'astro', 'ioredis'],
  // CommonJS dependencies bundled into ESM still call require() for Node's built-ins.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);",
  },
  // The bundle is not beside the sources: build/source-files.ts takes the checkout from here.
  define: { DEPOT_ROOT: JSON.stringify(ROOT) },
  // zod-openapi is imported for its types only and says it has no side effects.
  logOverride: { 'ignored-bare-import': 'silent' },
  logLevel: 'warning',
};

/**
 * What the stamp says about the bundle in `dir`: built from `inputs` ([path from ROOT, size, mtime])
 * by the esbuild and the options in `key`.
 * @typedef {{ key: string, dir: string, inputs: [string, number, number][] }} Stamp
 */

/** @returns {string} */
function stampKey() {
  const esbuild = /** @type {{ version: string }} */ (
    nodeModule.createRequire(import.meta.url)('esbuild/package.json')
  );
  return JSON.stringify({ esbuild: esbuild.version, options: OPTIONS });
}

/** @param {string} path */
const statOrNull = (path) => stat(path).catch(() => null);

/** @returns {Promise<Stamp | null>} */
const readStamp = () =>
  readFile(STAMP, 'utf8')
    .then(
      (text) => JSON.parse(text),
      () => null,
    )
    .catch(() => null);

/**
 * @param {string} key @returns {Promise<Stamp | null>} the stamp when every input is as it was.
 * Hundreds of inputs are looked at one after the other, synchronously: a promise each cost a
 * release 20 ms more.
 */
async function currentStamp(key) {
  const stamp = await readStamp();
  if (stamp?.key !== key || !(await statOrNull(join(CACHE_DIR, stamp.dir, 'depot.js')))) return null;
  const same = stamp.inputs.every(([path, size, mtime]) => {
    const info = statSync(join(ROOT, path), { throwIfNoEntry: false });
    return info !== undefined && info.size === size && info.mtimeMs === mtime;
  });
  return same ? stamp : null;
}

/** @param {string} key @returns {Promise<Stamp>} */
async function rebuild(key) {
  const started = Date.now();
  const { build } = await import('esbuild');
  const result = await build(OPTIONS);
  const files = result.outputFiles ?? [];
  const hash = createHash('sha256');
  for (const file of files) hash.update(file.path).update(file.contents);
  const dir = `build-${hash.digest('hex').slice(0, 16)}`;
  // Written under a name of its own, then renamed whole: a launch never sees half a bundle.
  const staging = join(CACHE_DIR, `tmp-${process.pid}-${Date.now()}`);
  for (const file of files) {
    const target = join(staging, file.path.slice(join(CACHE_DIR, 'out').length));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, file.contents);
  }
  await rename(staging, join(CACHE_DIR, dir)).catch(async (/** @type {NodeJS.ErrnoException} */ error) => {
    // Another launch built the same bundle meanwhile: keep theirs.
    if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    await rm(staging, { recursive: true, force: true });
  });
  const paths = Object.keys(result.metafile?.inputs ?? {}).concat(ALSO_CHECKED);
  /** @type {[string, number, number][]} */
  const inputs = [];
  for (const path of paths) {
    const info = await statOrNull(join(ROOT, path));
    // A file written while esbuild read it may be newer than what was bundled: 0 rebuilds next time.
    if (info) inputs.push([path, info.size, info.mtimeMs < started ? info.mtimeMs : 0]);
  }
  const stamp = { key, dir, inputs };
  const temp = join(CACHE_DIR, `tmp-stamp-${process.pid}.json`);
  await writeFile(temp, JSON.stringify(stamp));
  await rename(temp, STAMP);
  console.error(`[depot] bundled the CLI: ${inputs.length} inputs, ${Date.now() - started} ms`);
  return stamp;
}

/**
 * Bundles other than `keep` (the new one and the previous) that no running process uses: a command
 * that runs for minutes (a release) loads its chunks as it goes, from the bundle it started with,
 * however many times the sources changed meanwhile. @param {string[]} keep
 */
async function removeOldBundles(keep) {
  const hour = Date.now() - 3_600_000;
  for (const name of await readdir(CACHE_DIR)) {
    const path = join(CACHE_DIR, name);
    const old = name.startsWith('build-') && !keep.includes(name) && !(await inUse(path));
    const abandoned = name.startsWith('tmp-') && ((await statOrNull(path))?.mtimeMs ?? Infinity) < hour;
    if (old || abandoned) await rm(path, { recursive: true, force: true });
  }
}

/** Does a running process use the bundle in `path`? A marker whose process is gone (killed) does not count. @param {string} path */
async function inUse(path) {
  const pids = await readdir(join(path, USERS)).catch(() => []);
  return pids.some((pid) => {
    try {
      process.kill(Number(pid), 0);
      return true;
    } catch (error) {
      return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM'; // running, as another user
    }
  });
}

/**
 * Marks the bundle `dir` as used by this process until it exits. False when the bundle is gone
 * already (removed between reading the stamp and now): the caller looks again. @param {string} dir
 */
async function markInUse(dir) {
  const users = join(CACHE_DIR, dir, USERS);
  // Not recursive: that would make a removed bundle's folder again, empty.
  const made = await mkdir(users).then(
    () => true,
    (/** @type {NodeJS.ErrnoException} */ error) => error.code === 'EEXIST',
  );
  if (!made) return false;
  const marker = join(users, String(process.pid));
  await writeFile(marker, '');
  process.once('exit', () => rmSync(marker, { force: true }));
  return Boolean(await statOrNull(join(CACHE_DIR, dir, 'depot.js')));
}

/** @returns {Promise<string>} the bundle's entry, rebuilt first when it is not current, and marked in use by this process. */
async function currentBundle() {
  const key = stampKey();
  // A bundle removed under us (two rebuilds in the moment between reading the stamp and marking it) is looked for again.
  for (let attempt = 1; ; attempt++) {
    let stamp = await currentStamp(key);
    if (!stamp) {
      await mkdir(CACHE_DIR, { recursive: true });
      const previous = (await readStamp())?.dir ?? '';
      stamp = await rebuild(key);
      await removeOldBundles([stamp.dir, previous]);
    }
    if ((await markInUse(stamp.dir)) || attempt === 3) return join(CACHE_DIR, stamp.dir, 'depot.js');
  }
}

let entry;
try {
  entry = await currentBundle();
} catch (error) {
  // A build failure carries esbuild's messages, which it has printed above (logLevel).
  const failed = error instanceof Error && 'errors' in error;
  console.error(`depot: the CLI could not be bundled: ${failed ? "esbuild's errors above" : error}`);
  process.exit(1);
}
// The build lock names its holder by the script it runs (build/build-lock.ts): depot.ts, as ever.
process.argv[1] = ENTRY;
process.setSourceMapsEnabled(true);
// Node 22.1 and later keep V8's compiled code of the bundle on disk, where compiling it takes about
// 0.1 s of each launch on Node 20 (which has no such cache).
const { enableCompileCache } = /** @type {{ enableCompileCache?: (dir: string) => unknown }} */ (nodeModule);
enableCompileCache?.(join(CACHE_DIR, 'v8'));
await import(pathToFileURL(entry).href);
