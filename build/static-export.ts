import { copyFile, link, lstat, mkdir, readdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { NO_LOG } from '../server/helpers/log.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { NOT_FOUND_PAGE, TREE_NAME, type RouteEntry } from '../server/tree/format.ts';
import { shownLine } from '../server/free-text.ts';
import { RefusedError } from './changes/refused.ts';
import { writeFileAtomic } from '../server/write-atomic.ts';
import { staticLayoutConfigs, staticLayoutRuleCounts, type RuleCounts } from './static-layout-configs.ts';

export type StaticExport = {
  dir: string;
  tree: string;
  /** Answers laid out as files (the site's 404.html besides). */
  files: number;
  /** Paths left to the origin (no file by the layout's rule); -1 (as files) when unchanged. */
  skipped: number;
  counts: RuleCounts;
  /** Unchanged: the export already held this tree. */
  unchanged: boolean;
  ms: number;
};

/**
 * `depot export-static <dir>`: the current tree as the static layout, for Netlify, Cloudflare Pages,
 * S3 or GitHub Pages. `<dir>` is a symbolic link to `<dir>.exports/<tree>`, written whole beside the
 * last export and swapped in with one rename, so a host never publishes half an export; the older
 * export is then removed. Files are hard links into dist/files (copies across file systems): an
 * unchanged answer is the same file from one export to the next, and no stale one is left.
 */
export async function exportStatic(distDir: string, target: string, originUrl: string): Promise<StaticExport> {
  const started = performance.now();
  const treeDir = await currentTreeDir(distDir);
  if (!treeDir) throw new RefusedError(`${distDir} has no current tree; run \`npm run build\` first`);
  const out = resolve(target);
  const exports = `${out}.exports`;
  const tree = basename(treeDir);
  const existing = await lstat(out).catch(() => null);
  const linked = existing?.isSymbolicLink() ? await readlink(out) : undefined;
  if (existing && (linked === undefined || dirname(linked) !== exports))
    throw new RefusedError(`${target} exists and is not an export of this command; name a new path`);
  if (linked === join(exports, tree)) {
    const counts = await staticLayoutRuleCounts(out);
    return {
      dir: out,
      tree,
      files: -1,
      skipped: -1,
      counts,
      unchanged: true,
      ms: Math.round(performance.now() - started),
    };
  }
  await refuseForeignExports(exports);
  const routes = await readRoutes(treeDir);
  const configs = staticLayoutConfigs(routes, originUrl);
  const result = {
    dir: out,
    tree,
    files: configs.files.length,
    skipped: configs.skipped.length,
    counts: configs.counts,
  };
  const building = join(exports, `${tree}.tmp-${process.pid}`);
  await rm(building, { recursive: true, force: true });
  // The hosts answer a path with no file or rule with the root's 404.html, status 404: the site's 404 page.
  const notFound = routes[NOT_FOUND_PAGE];
  const notFoundFile = notFound ? [{ file: NOT_FOUND_FILE, entry: notFound }] : [];
  await linkFiles(treeDir, building, [...configs.files, ...notFoundFile]);
  await writeFileAtomic(join(building, '_redirects'), configs.redirects);
  await writeFileAtomic(join(building, '_headers'), configs.headers);
  await rm(join(exports, tree), { recursive: true, force: true });
  await rename(building, join(exports, tree));
  const swapping = `${out}.tmp-${process.pid}`;
  await rm(swapping, { force: true });
  await symlink(join(exports, tree), swapping);
  await rename(swapping, out);
  for (const name of await readdir(exports))
    if (name !== tree && isExportName(name)) await rm(join(exports, name), { recursive: true, force: true });
  return { ...result, unchanged: false, ms: Math.round(performance.now() - started) };
}

/** What this command writes in `<dir>.exports`: one export per tree, named as the tree, and one being written. */
const isExportName = (name: string) => TREE_NAME.test(name.replace(/\.tmp-\d+$/, ''));

/**
 * Issue 42 item 4: the export removes older exports from `<dir>.exports`, so that folder must be
 * its own. Refused when it is a symbolic link (its target's files would go) or not a folder, or
 * holds a name the command never writes; nothing is written or removed then.
 */
async function refuseForeignExports(exports: string): Promise<void> {
  const info = await lstat(exports).catch(() => null);
  if (!info) return;
  const refuse = (what: string) =>
    new RefusedError(
      `${shownLine(exports)} ${what}, which this command never makes; move it away or name another path`,
    );
  if (info.isSymbolicLink()) throw refuse('is a symbolic link');
  if (!info.isDirectory()) throw refuse('is not a folder');
  const foreign = (await readdir(exports)).filter((name) => !isExportName(name));
  if (foreign.length > 0)
    throw refuse(`holds ${shownLine(foreign[0]!)}${foreign.length > 1 ? ` and ${foreign.length - 1} more` : ''}`);
}

/** The tree's routes, a release's delta tree's as the origin serves them (its base's, less what changed). */
async function readRoutes(treeDir: string): Promise<Record<string, RouteEntry>> {
  const tree = await openTree(treeDir, undefined, NO_LOG);
  const routes: Record<string, RouteEntry> = {};
  for (const path of tree.routes.paths()) {
    const entry = tree.routes.get(path);
    if (entry) routes[path] = entry;
  }
  return routes;
}

/** Links (or copies) each file into place, a few hundred at a time: each is a system call on libuv's pool. */
async function linkFiles(
  treeDir: string,
  into: string,
  files: readonly { file: string; entry: RouteEntry }[],
): Promise<void> {
  const folders = new Set(files.map(({ file }) => dirname(join(into, file))));
  for (const folder of folders) await mkdir(folder, { recursive: true });
  const place = async (from: string, to: string) =>
    link(from, to).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EXDEV') throw error;
      return copyFile(from, to);
    });
  for (let start = 0; start < files.length; start += LINKS_AT_ONCE)
    await Promise.all(
      files
        .slice(start, start + LINKS_AT_ONCE)
        .map(({ file, entry }) => place(join(treeDir, entry.file), join(into, file))),
    );
}
const LINKS_AT_ONCE = 256;

/** Where Netlify, Cloudflare Pages and GitHub Pages look for the page they answer a 404 with (S3: its error document). */
export const NOT_FOUND_FILE = '/404.html';

/** `export-static <dir>`: one folder, nothing else. */
export function exportStaticArgs(args: readonly string[]): string {
  if (args.length !== 1 || !args[0] || args[0].startsWith('-'))
    throw new RefusedError('name one folder to export into: npm run depot -- export-static <dir>');
  return args[0];
}
