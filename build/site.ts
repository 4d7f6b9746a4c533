import { NOT_FOUND_PAGE } from '../server/tree/format.ts';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import pLimit from 'p-limit';
import { CACHE_CONTROL, PAGE_SECURITY_POLICY } from '../server/http/cache.ts';
import { isCompressible } from '../server/http/compress.ts';
import { strongEtag } from '../server/http/etag.ts';
import type { RouteEntry } from '../server/tree/format.ts';
import { ROOT, digestSources, listFiles } from './source-files.ts';
import { writeTreeFile } from './tree-file.ts';
import type { FileStore } from './file-store.ts';
import { sha256Hex } from '../server/digest.ts';
import type { DataFileMemory } from '../server/data-file-memory.ts';
import { MEDIA_TYPES } from '../server/http/media-types.ts';
import { allOrFirstError } from '../server/settle.ts';

const SITE_DIR = join(ROOT, 'site');
/** What the pages are rendered from besides the tree's catalog: their own sources, and the server code and packages they import. */
const SITE_INPUTS = [
  join(SITE_DIR, 'src'),
  join(SITE_DIR, 'astro.config.mjs'),
  join(ROOT, 'server'),
  join(ROOT, 'package-lock.json'),
];
/** Bump when how site files become routes changes. */
const SITE_FORMAT = 2;

/** What Astro may emit into the tree. */
const SITE_FILES = ['html', 'css', 'js'] as const;

/** A digest of the site's sources (and the server code pages import): part of the build's input digest. */
export function siteSourceDigest(memory?: DataFileMemory): Promise<string> {
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

/**
 * The Astro build of site/, for the tree in `treeDir` (its catalog.json already written): pages,
 * scripts and styles become tree files and manifest routes, served like every other answer. The
 * output is kept in `cacheDir`, keyed by every input, so an unchanged site is not built again.
 */
export async function buildSite(
  store: FileStore,
  treeDir: string,
  cacheDir: string,
  sourceDigest: string,
  publicUrl: string,
): Promise<{ routes: Record<string, RouteEntry>; built: boolean }> {
  const key = siteKey(sourceDigest, await readFile(join(treeDir, 'catalog.json')), publicUrl);
  const outDir = join(cacheDir, 'site', key);
  const built = !(await exists(outDir));
  if (built) await runAstro(treeDir, outDir, cacheDir, publicUrl);
  // Files compress on zlib's thread pool, a few at a time; the manifest keeps path order.
  const limit = pLimit(4);
  const entries = await allOrFirstError(
    (await listFiles(outDir)).map((file) =>
      limit(async (): Promise<[string, RouteEntry]> => {
        const name = relative(outDir, file);
        const ext = name.slice(name.lastIndexOf('.') + 1);
        if (!(SITE_FILES as readonly string[]).includes(ext))
          throw new Error(`site: ${name}: no content type for .${ext} (site/ may emit ${SITE_FILES.join(', ')})`);
        const type = MEDIA_TYPES[ext as (typeof SITE_FILES)[number]];
        const bytes = await readFile(file);
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
        const path = routePath(name);
        // The "page not found" page says so when asked for by its own address too.
        const status = path === NOT_FOUND_PAGE ? 404 : 200;
        return [path, { ...stored, status, headers: Object.fromEntries(Object.entries(headers).sort()) }];
      }),
    ),
  );
  const routes = Object.fromEntries(entries);
  return { routes, built };
}

/** index.html -> /, versions.html -> /versions, _site/x.css -> /_site/x.css. */
function routePath(name: string): string {
  const path = `/${name.split('\\').join('/')}`;
  if (path === '/index.html') return '/';
  return path.endsWith('.html') ? path.slice(0, -'.html'.length) : path;
}

/** `publicUrl` (PUBLIC_URL) makes the pages' Open Graph and Twitter card links absolute, as those readers need. */
async function runAstro(treeDir: string, outDir: string, cacheDir: string, publicUrl: string): Promise<void> {
  // Astro reports usage to its makers by default; this service's builds talk to nobody.
  process.env.ASTRO_TELEMETRY_DISABLED = '1';
  const { build } = await import('astro');
  const staging = `${outDir}.tmp-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(join(cacheDir, 'site'), { recursive: true });
  await build(
    {
      root: SITE_DIR,
      outDir: staging,
      cacheDir: join(cacheDir, 'astro'),
      logLevel: 'error',
      vite: {
        cacheDir: join(cacheDir, 'vite'),
        define: {
          __DEPOT_TREE_DIR__: JSON.stringify(treeDir),
          __DEPOT_PUBLIC_URL__: JSON.stringify(publicUrl),
        },
      },
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
