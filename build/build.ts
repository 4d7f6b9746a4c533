import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ENCODER_REVISION } from '../server/brands/formats.ts';
import { DEFAULT_DEPLOY, DEFAULT_RATE_LIMIT, type DeployOptions } from '../server/config.ts';
import type { RateLimitPolicy } from '../server/http/rate-limit.ts';
import { loadCatalog, type Catalog } from '../server/versions/catalog.ts';
import { sha256Hex } from '../server/digest.ts';
import { TREES_DIR, currentTreeDir, readManifestSource, type Manifest } from '../server/tree.ts';
import { createByteCache } from '../server/byte-cache.ts';
import { loadBrandSources } from '../server/brands/sources.ts';
import { createFileStorage, createMemoryStorage } from '../server/storage.ts';
import { createAppContext, type AppContext } from '../server/context.ts';
import { OPENAPI_PATH } from '../server/openapi.ts';
import { brandMap } from '../server/tree.ts';
import { listBrandPaths, listVersionPaths } from './paths.ts';
import { prerender } from './prerender.ts';
import { writeDeployConfigs } from './deploy-configs.ts';
import { acquireBuildLock } from './build-lock.ts';
import { buildSite, siteSourceDigest } from './site.ts';
import { stageTree } from './stage.ts';
import { removeAbandonedStaging, swapTree } from './swap.ts';

/** Bump when the tree's layout or any answer's bytes change for the same data/. */
const TREE_FORMAT = 4;

export type BuildOptions = {
  dataDir: string;
  distDir: string;
  /** Rendered images kept between builds, keyed by their inputs (default <distDir>/.cache). */
  cacheDir?: string;
  /** Skip the build when dist/current was built from the same inputs. */
  ifChanged?: boolean;
  /** Build the human site into the tree (default); false: the API alone. */
  site?: boolean;
  /** What the generated nginx.conf, _headers and _redirects name (default: one origin on :3000, nginx on :8080). */
  deploy?: DeployOptions;
  /** SPEC 8's limit, which nginx approximates on precomputed API answers (default 100/15m). */
  rateLimit?: RateLimitPolicy | null;
  log?: (line: string) => void;
  /** What a build waits for (another build's lock) or takes over (a killed build's); default stderr. */
  notice?: (line: string) => void;
};

export type BuildResult = { treeDir: string; routes: number; skipped: boolean; rendered: number };

/** data/ -> dist/trees/<digest>, then dist/current swapped to it. One progress line per step. */
export async function runBuild(options: BuildOptions): Promise<BuildResult> {
  // One build at a time per dist/: a build that loaded data/ before a release wrote its record must
  // not swap in after the release's own build, hiding it until the next one.
  await mkdir(options.distDir, { recursive: true });
  const release = await acquireBuildLock(join(options.distDir, '.build.lock'), {
    notice: options.notice ?? ((line) => console.error(line)),
  });
  try {
    await removeAbandonedStaging(options.distDir);
    return await buildLocked(options);
  } finally {
    await release();
  }
}

async function buildLocked(options: BuildOptions): Promise<BuildResult> {
  const { dataDir, distDir, ifChanged = false, site: withSite = true, log = () => {} } = options;
  const cacheDir = options.cacheDir ?? join(distDir, '.cache');
  // The tree's name digests the deployment settings, but not dist/'s own place: the same data built
  // into another dist/ is the same tree, its nginx.conf naming the files where they are.
  const deploy = options.deploy ?? DEFAULT_DEPLOY;
  const rateLimit = options.rateLimit === undefined ? DEFAULT_RATE_LIMIT : options.rateLimit;
  const step = timed(log);
  const { catalog, brandSources } = await step('load', async () => {
    const loaded = { catalog: await loadCatalog(dataDir), brandSources: await loadBrandSources(dataDir) };
    return [
      loaded,
      `${loaded.catalog.versions.length} versions, ${loaded.catalog.users.size} users, ${loaded.brandSources.length} brand variants from ${dataDir}`,
    ] as const;
  });
  const brandRecords = brandSources.map(({ bytes: _bytes, ...record }) => record);
  const site = withSite ? await siteSourceDigest() : null;
  const source = inputDigest({ site, deploy, rateLimit, catalog, brandRecords });
  const previousTree = await currentTreeDir(distDir);
  if (ifChanged && (await readManifestSource(distDir)) === source && previousTree) {
    log(`[build] unchanged since the current tree: ${previousTree}`);
    return { treeDir: previousTree, routes: 0, skipped: true, rendered: 0 };
  }
  const stagingDir = join(distDir, TREES_DIR, `.staging-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(stagingDir, { recursive: true });
  try {
    await step('stage', async () => {
      await stageTree(stagingDir, dataDir, catalog, brandSources, previousTree);
      return [undefined, `${new Set(catalog.versions.map((v) => v.sha256)).size} JARs`] as const;
    });
    const tree = { dir: stagingDir, catalog, brands: brandMap(brandRecords), routes: new Map(), source };
    const paths = await step('list paths', async () => {
      const list = [...listVersionPaths(catalog), ...listBrandPaths(tree.brands), '/api/charts/example', OPENAPI_PATH];
      return [list, `${list.length} routes`] as const;
    });
    // The build answers only finite, public routes: state (servers, samples) starts empty.
    const ctx = createAppContext(createMemoryStorage(), {
      tree: () => tree,
      imageCache: createByteCache(createFileStorage(cacheDir), 'brand-images', { keepForever: true }),
      publicUrl: deploy.publicUrl,
    });
    const routes = await step('prerender', () => prerenderWithProgress(ctx, paths, log));
    const siteRoutes = await step('site', () => siteStep(stagingDir, cacheDir, site));
    const allRoutes = { ...routes, ...siteRoutes };
    const manifestText = JSON.stringify({ format: 1, source, routes: allRoutes } satisfies Manifest);
    const treeName = sha256Hex(manifestText).slice(0, 20);
    await step('write', async () => {
      await writeFile(join(stagingDir, 'manifest.json'), manifestText);
      const deployed = { ...deploy, distDir: deploy.distDir ?? resolve(distDir) };
      return [
        undefined,
        `manifest.json, ${await writeDeployConfigs(stagingDir, treeName, allRoutes, deployed, rateLimit)}`,
      ] as const;
    });
    const treeDir = await step('swap', async () => {
      const dir = await swapTree(distDir, stagingDir, treeName);
      return [dir, `${join(distDir, 'current')} -> ${dir}`] as const;
    });
    return {
      treeDir,
      routes: paths.length + Object.keys(siteRoutes).length,
      skipped: false,
      rendered: ctx.renderer.renders(),
    };
  } catch (error) {
    await rm(stagingDir, { recursive: true, force: true });
    throw error;
  }
}

/** What a tree is made from; the same digest means the same tree (`--if-changed` then skips the build). */
function inputDigest(inputs: {
  site: string | null;
  deploy: DeployOptions;
  rateLimit: RateLimitPolicy | null;
  catalog: Catalog;
  brandRecords: unknown[];
}): string {
  const { site, deploy, rateLimit, catalog, brandRecords } = inputs;
  return sha256Hex(
    JSON.stringify({
      TREE_FORMAT,
      ENCODER_REVISION,
      site,
      deploy,
      rateLimit,
      versions: catalog.versions,
      users: [...catalog.users.values()],
      brands: brandRecords,
    }),
  );
}

/** Asks the app for every path, with one progress line per 25% on long builds (a first build renders every image). */
async function prerenderWithProgress(ctx: AppContext, paths: string[], log: (line: string) => void) {
  let reported = 0;
  const answers = await prerender(ctx, paths, (done) => {
    if (done === paths.length || done - reported >= paths.length / 4) {
      reported = done;
      if (done < paths.length)
        log(`[build]   prerender: ${done}/${paths.length}, ${ctx.renderer.renders()} images rendered`);
    }
  });
  return [
    answers,
    `${paths.length} answers, ${ctx.renderer.renders()} images rendered (the rest from the build cache)`,
  ] as const;
}

/** The human site's pages, scripts and styles (or none with SITE=off). */
async function siteStep(stagingDir: string, cacheDir: string, site: string | null) {
  if (site === null) return [{}, 'off (SITE=off)'] as const;
  const result = await buildSite(stagingDir, cacheDir, site);
  const pages = Object.keys(result.routes).filter((path) => !path.startsWith('/_site/')).length;
  return [
    result.routes,
    `${pages} pages, ${Object.keys(result.routes).length - pages} scripts and styles (${result.built ? 'built with Astro' : 'from the build cache'})`,
  ] as const;
}

function timed(log: (line: string) => void) {
  return async <T>(name: string, run: () => Promise<readonly [T, string]>): Promise<T> => {
    const started = performance.now();
    const [value, summary] = await run();
    log(`[build] ${name}: ${summary} (${Math.round(performance.now() - started)} ms)`);
    return value;
  };
}
