import { NOT_FOUND_PAGE } from '../server/tree/format.ts';
import { mkdir, readFile, rename, rm, stat, symlink } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { join, relative } from 'node:path';
import pLimit from 'p-limit';
import { CACHE_CONTROL, PAGE_SECURITY_POLICY } from '../server/http/cache.ts';
import { isCompressible } from '../server/http/compress.ts';
import { strongEtag } from '../server/http/etag.ts';
import type { RouteEntry } from '../server/tree/format.ts';
import { ROOT, digestSources, listFiles, type SourceFileValues } from './source-files.ts';
import { writeTreeFile } from './tree-file.ts';
import type { EntryOrText } from '../server/tree/manifest-text.ts';
import type { SiteRender } from '../site/src/lib/tree.ts';
import type { FileStore } from './file-store.ts';
import { sha256Hex } from '../server/helpers/digest.ts';
import type { DataFileMemory } from '../server/data-file-memory.ts';
import { MEDIA_TYPES } from '../server/http/media-types.ts';
import { allOrFirstError } from '../server/helpers/settle.ts';

const SITE_DIR = join(ROOT, 'site');
/** What the pages are rendered from besides the tree's catalog: their own sources, and the server code and packages they import. */
const SITE_INPUTS = [
  join(SITE_DIR, 'src'),
  join(SITE_DIR, 'astro.config.mjs'),
  join(ROOT, 'server'),
  join(ROOT, 'package-lock.json'),
];
/** Bump when how site files become routes changes (3: a renderer per source digest, pages rendered per build). */
const SITE_FORMAT = 3;

/** What Astro may emit into the tree. */
const SITE_FILES = ['html', 'css', 'js'] as const;

/** A digest of the site's sources (and the server code pages import): part of the build's input digest. */
export function siteSourceDigest(memory?: DataFileMemory<SourceFileValues>): Promise<string> {
  return digestSources(`site ${SITE_FORMAT}`, SITE_INPUTS, memory);
}

/**
 * What the site is made from: its sources and the server code and packages they import (which
 * make the OpenAPI document the API reference shows: building it to digest it cost a release
 * 0.2 s), and the tree's catalog.json.
 */
export function siteKey(sourceDigest: string, catalog: string | Uint8Array, publicUrl: string): string {
  return sha256Hex(sourceDigest, catalog, publicUrl).slice(0, 32);
}

/** The site of one tree: its routes, and each page's key (pageKeys) for the next build to reuse it by. */
export type BuiltSite = {
  routes: Record<string, EntryOrText<RouteEntry>>;
  pages: Record<string, string>;
  rendered: number;
};

/** What of the previous tree's site a build may reuse: the pages' keys and the routes they were served by. */
export type PreviousSite = { pages: Readonly<Record<string, string>>; routes: ReadonlyMap<string, string> };

/**
 * The human site of the tree in `tree.dir`: site/ compiled once per change of its sources
 * (siteRenderer), then each page (site/src/lib/pages.ts) rendered with its data, unless the previous
 * tree has it from the same data (its key), and stored as a tree file with the site's headers.
 */
export async function buildSite(
  store: FileStore,
  tree: SiteRender['tree'],
  settings: { cacheDir: string; sourceDigest: string; publicUrl: string },
  previous: PreviousSite | undefined,
): Promise<BuiltSite & { compiled: boolean }> {
  const { render, clientDir, compiled } = await siteRenderer(settings.cacheDir, settings.sourceDigest);
  const { sitePages } = await import('../site/src/lib/pages.ts');
  // Every page shows the project and PUBLIC_URL: a change of either, or of the site's code, renders all.
  const shared = sha256Hex(settings.sourceDigest, settings.publicUrl, JSON.stringify(tree.project ?? null));
  const { pages: sitePageList, presented } = sitePages(tree.catalog);
  const keyOf = pageKeys(shared, presented);
  const routes: BuiltSite['routes'] = await assetRoutes(store, clientDir);
  const pages: Record<string, string> = Object.fromEntries(Object.keys(routes).map((path) => [path, '']));
  let rendered = 0;
  for (const page of sitePageList) {
    const key = page.data === undefined ? '' : keyOf(page.data);
    pages[page.path] = key;
    const kept = key && previous?.pages[page.path] === key ? previous.routes.get(page.path) : undefined;
    if (kept) {
      routes[page.path] = kept;
      continue;
    }
    const request = new Request(new URL(page.path, 'http://site.invalid'));
    const response = await render(request, { tree, publicUrl: settings.publicUrl, page: page.data });
    const status = page.path === NOT_FOUND_PAGE ? 404 : 200;
    if (response.status !== status) throw new Error(`site: ${page.path} rendered with status ${response.status}`);
    routes[page.path] = await siteRoute(store, Buffer.from(await response.arrayBuffer()), 'html', status);
    rendered++;
  }
  return { routes, pages, rendered, compiled };
}

/**
 * The key of a page's data, with what every page shows (`shared`): each version as presented is
 * digested once, not once per page that lists it (a version is on a dozen history pages).
 */
function pageKeys(shared: string, presented: readonly object[]) {
  const digests = new Map<unknown, string>(presented.map((version) => [version, sha256Hex(JSON.stringify(version))]));
  const replacer = (_key: string, value: unknown) => digests.get(value) ?? value;
  return (data: object) => sha256Hex(shared, JSON.stringify(data, replacer)).slice(0, 32);
}

/** The pages' scripts and styles, as the compiled site has them. */
async function assetRoutes(store: FileStore, clientDir: string) {
  const limit = pLimit(4);
  const entries = await allOrFirstError(
    (await listFiles(clientDir)).map((file) =>
      limit(async (): Promise<[string, RouteEntry]> => {
        const name = relative(clientDir, file).split('\\').join('/');
        const ext = name.slice(name.lastIndexOf('.') + 1);
        return [`/${name}`, await siteRoute(store, await readFile(file), ext, 200)];
      }),
    ),
  );
  return Object.fromEntries(entries);
}

/** A page, script or style as a tree file, with the headers the site's files are served with. */
async function siteRoute(store: FileStore, bytes: Uint8Array, ext: string, status: number): Promise<RouteEntry> {
  if (!(SITE_FILES as readonly string[]).includes(ext))
    throw new Error(`site: no content type for .${ext} (site/ may emit ${SITE_FILES.join(', ')})`);
  const type = MEDIA_TYPES[ext as (typeof SITE_FILES)[number]];
  const page = ext === 'html';
  const headers: Record<string, string> = {
    'cache-control': page ? CACHE_CONTROL.sitePage : CACHE_CONTROL.siteAsset,
    'content-type': type,
    etag: strongEtag(bytes),
    vary: 'accept-encoding',
    'x-content-type-options': 'nosniff',
    ...(page ? { 'content-security-policy': PAGE_SECURITY_POLICY } : {}),
  };
  const stored = await writeTreeFile(store, bytes, ext, isCompressible(type));
  return { ...stored, status, headers: Object.fromEntries(Object.entries(headers).sort()) };
}

type Render = (request: Request, depot: SiteRender) => Promise<Response>;

/** Is site/ of these sources compiled already (the site step then takes a second, not ten)? */
export const siteRendererReady = (cacheDir: string, sourceDigest: string) =>
  exists(rendererDir(cacheDir, sourceDigest));

const rendererDir = (cacheDir: string, sourceDigest: string) => join(cacheDir, 'site', sourceDigest.slice(0, 32));

/**
 * site/ compiled by Astro into a renderer (astro.config.mjs's adapter), kept in `cacheDir` by the
 * digest of its sources, so builds of other data reuse it: `render` and the scripts and styles.
 */
async function siteRenderer(cacheDir: string, sourceDigest: string) {
  const outDir = rendererDir(cacheDir, sourceDigest);
  const compiled = !(await exists(outDir));
  if (compiled) await runAstro(outDir, cacheDir);
  const entry = join(outDir, 'server', 'entry.mjs');
  const { render } = (await import(pathToFileURL(entry).href)) as { render: Render };
  return { render, clientDir: join(outDir, 'client'), compiled };
}

/** Compiles site/ into `outDir`: `server/entry.mjs` (the renderer) and `client/` (scripts and styles). */
async function runAstro(outDir: string, cacheDir: string): Promise<void> {
  // Astro reports usage to its makers by default; this service's builds talk to nobody.
  process.env.ASTRO_TELEMETRY_DISABLED = '1';
  const { build } = await import('astro');
  const staging = `${outDir}.tmp-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(join(cacheDir, 'site'), { recursive: true });
  // The renderer imports the packages it does not bundle (astro, sharp, ...): the checkout's, found
  // from any BUILD_CACHE_DIR by a node_modules link beside the compiled sites.
  await symlink(join(ROOT, 'node_modules'), join(cacheDir, 'site', 'node_modules'), 'dir').catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    },
  );
  await build(
    {
      root: SITE_DIR,
      outDir: staging,
      cacheDir: join(cacheDir, 'astro'),
      logLevel: 'error',
      vite: { cacheDir: join(cacheDir, 'vite') },
    },
    { teardownCompiler: false },
  );
  await rename(staging, outDir).catch(async (error: NodeJS.ErrnoException) => {
    // Another build made the same site meanwhile: keep theirs.
    if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    await rm(staging, { recursive: true, force: true });
  });
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );
