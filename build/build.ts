import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ENCODER_REVISION } from '../server/brands/formats.ts';
import { DEFAULT_DEPLOY, DEFAULT_RATE_LIMIT, type DeployOptions } from '../server/config.ts';
import type { RateLimitPolicy } from '../server/http/rate-limit.ts';
import { createCatalog, loadCatalog, type Catalog } from '../server/versions/catalog.ts';
import { sha256Hex } from '../server/digest.ts';
import {
  DELTA_VERSIONS_MAX,
  TREES_DIR,
  currentTreeDir,
  readManifestSource,
  type ManifestHead,
  type RouteEntry,
  type TreeDelta,
} from '../server/tree.ts';
import { diffCatalogs, isEmptyChange, type AnswerChanges } from '../server/answer-inputs.ts';
import { manifestText, type EntryOrText } from '../server/manifest-text.ts';
import { loadBrandSources, type LoadedBrandSource } from '../server/brands/sources.ts';
import type { AppContext } from '../server/context.ts';
import { OPENAPI_PATH } from '../server/openapi-path.ts';
import { brandMap } from '../server/tree.ts';
import { listBrandPaths, listVersionPaths } from './paths.ts';
import { acquireBuildLock } from './build-lock.ts';
import { buildSite, siteKey, siteSourceDigest } from './site.ts';
import { catalogFileText, stageTree } from './stage.ts';
import {
  BUILD_RECORD,
  answerCodeDigest,
  readBuiltTree,
  readPreviousTree,
  reusedAnswers,
  type BuildRecord,
  type BuiltTree,
} from './previous-tree.ts';
import { VERIFIED_DATA, openVerifiedData } from './verified-data.ts';
import { removeAbandonedStaging, swapTree } from './swap.ts';
import { STORE_DIR, openFileStore, removeUnusedFiles, type FileStore } from './file-store.ts';
import { describeOtherCode } from './upgrade.ts';

/**
 * The tree's layout. Other code rebuilds by itself (the answers' code digest is part of the source,
 * so no bump is needed when answers change); kept so no tree of another layout has this one's source.
 */
const TREE_FORMAT = 7;

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
  /**
   * Changes data/ under the build lock and returns the catalog as changed, given the catalog the
   * current tree serves (data/ as loaded when no tree can serve as base): a release checks for
   * duplicates and writes its record there. The change is served at once (serveChangeFirst), then
   * the build loads data/ as usual.
   */
  change?: (catalog: Catalog) => Promise<Catalog>;
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

    const result = await buildLocked(options);
    // Once the new tree is served: the files of pruned trees and of killed builds go.
    if (!result.skipped) {
      const removed = await removeUnusedFiles(options.distDir).then(
        (count) => `${count} files no kept tree names removed`,
        (error: Error) => `unused files kept (${error.message})`,
      );
      options.log?.(`[build] clean: ${join(options.distDir, STORE_DIR)}: ${removed}`);
    }
    return result;
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
  // The tree a change was served from: data/ has the change, and the tree need not be read again.
  const servedFrom = options.change ? await serveChangeFirst(distDir, dataDir, withSite, options.change, step) : null;
  const change = servedFrom ? undefined : options.change;
  const { catalog, brandSources, site, answerCode, verified } = await step('load', async () => {
    // Records, changelogs, JARs, brand sources and the build's own sources read by an earlier build
    // and unchanged since (same file, size and times) are not read again.
    const verified = await openVerifiedData(join(cacheDir, VERIFIED_DATA), dataDir);
    const loaded = {
      catalog: await loadCatalog(dataDir, verified.memory),
      brandSources: await loadBrandSources(dataDir, verified.memory),
      site: withSite ? await siteSourceDigest(verified.memory) : null,
      answerCode: await answerCodeDigest(verified.memory),
    };
    if (change) loaded.catalog = await change(loaded.catalog);
    return [
      { ...loaded, verified },
      `${loaded.catalog.versions.length} versions, ${loaded.catalog.users.size} users, ${loaded.brandSources.length} brand variants from ${dataDir}`,
    ] as const;
  });
  const brandRecords = brandSources.map(({ bytes: _bytes, ...record }) => record);
  const source = inputDigest({ site, deploy, rateLimit, catalog, brandRecords, answerCode });
  const previousTree = await currentTreeDir(distDir);
  if (ifChanged && (await readManifestSource(distDir)) === source && previousTree) {
    log(`[build] unchanged since the current tree: ${previousTree}`);
    await verified.save();
    return { treeDir: previousTree, routes: 0, skipped: true, rendered: 0 };
  }
  // The answers' code, and the one setting answers print (the feeds' PUBLIC_URL links).
  const code = sha256Hex(answerCode, JSON.stringify({ publicUrl: deploy.publicUrl ?? null }));
  const otherCode = await describeOtherCode(previousTree, code);
  if (otherCode) log(otherCode);
  const previous = await readPreviousTree(previousTree, code, { catalog, brands: brandRecords }, servedFrom);
  // Encoded once: hashed twice and written into each staged tree.
  const catalogText = Buffer.from(catalogFileText(catalog, brandRecords));
  const catalogDigest = sha256Hex(catalogText);
  const siteNow = site === null ? null : siteKey(site, catalogText);
  // The API goes first, with the previous tree's site, then the site of this data in a second tree:
  // a release is served without waiting for Astro. A tree whose site is not yet this data's has its
  // own source, so `--if-changed` after a crash between the two swaps builds the site.
  const carried = siteNow !== null ? (previous?.record.site ?? null) : null;
  const siteDone = siteNow === null || carried?.key === siteNow;
  const deployed = { ...deploy, distDir: deploy.distDir ?? resolve(distDir) };
  const store = await openFileStore(distDir, previous?.jars ?? []);

  // A tree with answers or a site still to follow serves the origins only: deploy from the finished
  // tree (its nginx.conf, _headers and _redirects), the one `npm run build` and `depot release` end
  // on. Writing them twice cost a release 1.3 s at 10,000 versions (100 MB of configs).
  const write = (
    stagingDir: string,
    routes: Record<string, EntryOrText<RouteEntry>>,
    record: BuildRecord,
    head: ManifestHead,
    toFollow: string | null,
  ) =>
    step('write', async () => {
      const treeName = await writeManifest(stagingDir, routes, record, head);
      const configs =
        toFollow === null
          ? await (
              await import('./deploy-configs.ts')
            ).writeDeployConfigs(stagingDir, treeName, parsedEntries(routes), deployed, rateLimit)
          : `no deploy configs until ${toFollow}`;
      return [treeName, `manifest.json, ${configs}`] as const;
    });
  const stage = (stagingDir: string) => stageStep(step, store, stagingDir, dataDir, catalog, catalogText, brandSources);
  const apiRecord = { code, catalog: catalogDigest, site: carried };

  // Not when the current tree serves this catalog already (a change served first), nor when the
  // brand images changed: the origins would render them all.
  const changes = previous?.changes;
  if (changes && !changes.brands && !isEmptyChange(changes) && previous!.servedCatalog !== catalogDigest) {
    const record = { ...apiRecord, base: basename(previous!.dir) };
    await swapFirstTree(distDir, step, { store, dataDir, catalog, catalogText, record, changes, source });
  }

  // What loading data/ read and checked, for the next build: written once a release is served.
  await verified.save();
  // The app that answers (h3, the renderer, the storage layer) is loaded once a release's first
  // tree is served: compiling it before took that tree a tenth of a second.
  const answering = Promise.all([
    import('../server/context.ts'),
    import('../server/byte-cache.ts'),
    import('../server/storage.ts'),
  ]);
  const brands = brandMap(brandRecords);
  const paths = await step('list paths', async () => {
    const list = [...listVersionPaths(catalog), ...listBrandPaths(brands), '/api/charts/example', OPENAPI_PATH];
    return [list, `${list.length} routes`] as const;
  });
  const kept = await reusedAnswers(previous, paths, catalog);
  const carriedRoutes = carried && previous ? carryRoutes(await previous.routes(), carried.paths) : {};

  const apiStaging = await newStagingDir(distDir);
  let apiTree: string;
  let answers: Record<string, EntryOrText<RouteEntry>>;
  let rendered: number;
  try {
    await stage(apiStaging);
    const [{ createAppContext }, { createByteCache }, { createFileStorage, createMemoryStorage }] = await answering;
    const tree = { dir: apiStaging, catalog, brands, routes: new Map(), source };
    // The build answers only finite, public routes: state (servers, samples) starts empty.
    const ctx = createAppContext(createMemoryStorage(), {
      tree: () => tree,
      imageCache: createByteCache(createFileStorage(cacheDir), 'brand-images', { keepForever: true }),
      publicUrl: deploy.publicUrl,
    });
    answers = await step('prerender', () => prerenderWithProgress(ctx, store, paths, kept, log));
    rendered = ctx.renderer.renders();
    const treeName = await write(
      apiStaging,
      { ...answers, ...carriedRoutes },
      apiRecord,
      { format: 1, source: siteDone ? source : sha256Hex(source, 'site pending') },
      siteDone ? null : 'the site follows',
    );
    const pending = siteDone ? '' : carried ? ' (site follows; the previous one meanwhile)' : ' (site follows)';
    apiTree = await swapStep(step, distDir, apiStaging, treeName, pending);
  } catch (error) {
    await rm(apiStaging, { recursive: true, force: true });
    throw error;
  }
  if (siteDone) return { treeDir: apiTree, routes: Object.keys(answers).length, skipped: false, rendered };

  const siteStaging = await newStagingDir(distDir);
  try {
    // The same API answers, then this data's site.
    await stageTree(store, siteStaging, dataDir, catalog, brandSources, catalogText);
    const siteRoutes = await step('site', () => siteStep(store, siteStaging, cacheDir, site));
    const treeName = await write(
      siteStaging,
      { ...answers, ...siteRoutes },
      { code, catalog: catalogDigest, site: { key: siteNow!, paths: Object.keys(siteRoutes) } },
      { format: 1, source },
      null,
    );
    const treeDir = await swapStep(step, distDir, siteStaging, treeName, '');
    return {
      treeDir,
      routes: Object.keys(answers).length + Object.keys(siteRoutes).length,
      skipped: false,
      rendered,
    };
  } catch (error) {
    await rm(siteStaging, { recursive: true, force: true });
    throw error;
  }
}

async function newStagingDir(distDir: string): Promise<string> {
  const dir = join(distDir, TREES_DIR, `.staging-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

type Step = ReturnType<typeof timed>;

/**
 * A change (a release, a user) served before data/ is loaded again: made to the catalog the current
 * tree serves, whose first tree is swapped in at once; the build then loads data/ (at 10,000
 * versions, 20,000 files checked) and follows with the full trees, which also serve whatever else
 * changed in data/ since the current tree was built. Returns the tree it was served from; null when
 * the current tree cannot be a base (none, a release's first tree, not as the build wrote it): the
 * change is then made to data/ as loaded.
 */
async function serveChangeFirst(
  distDir: string,
  dataDir: string,
  withSite: boolean,
  change: (catalog: Catalog) => Promise<Catalog>,
  step: Step,
): Promise<BuiltTree | null> {
  const dir = await currentTreeDir(distDir);
  const current = dir ? await readBuiltTree(dir) : null;
  if (!current) return null;
  const served = current.catalog;
  const before = createCatalog(served.versions, served.users);
  const catalog = await change(before);
  const changes = diffCatalogs({ ...served, latest: before.latest }, { catalog, brands: served.brands });
  if (isEmptyChange(changes)) return current;
  const catalogText = Buffer.from(catalogFileText(catalog, served.brands));
  const record = {
    code: current.record.code,
    catalog: sha256Hex(catalogText),
    site: withSite ? current.record.site : null,
    base: basename(current.dir),
  };
  // Never a tree built from data/'s source: `--if-changed` builds after it.
  const source = sha256Hex(record.catalog, 'served before data/ is loaded');
  const store = await openFileStore(distDir, current.jars);
  await swapFirstTree(distDir, step, { store, dataDir, catalog, catalogText, record, changes, source });
  return current;
}

/**
 * A release's first tree: a tree of the changed catalog that serves its base's answers but those
 * that read the change (server/answer-inputs.ts), which the origins answer live from the catalog
 * (the same bytes as precomputed: the tree's parity test) until the next tree holds them
 * precomputed. Its manifest names the base rather than copying its routes (megabytes to read, hash
 * and write at 1,000 versions), and it has no deploy configs: nginx keeps the finished tree's.
 */
async function swapFirstTree(
  distDir: string,
  step: Step,
  tree: {
    store: FileStore;
    dataDir: string;
    catalog: Catalog;
    catalogText: Uint8Array;
    record: BuildRecord & { base: string };
    changes: AnswerChanges;
    source: string;
  },
) {
  const { record, changes } = tree;
  const staging = await newStagingDir(distDir);
  try {
    await stageStep(step, tree.store, staging, tree.dataDir, tree.catalog, tree.catalogText, []);
    const delta = { base: record.base, changes, site: record.site !== null, ...deltaCatalog(tree.catalog, changes) };
    const head = { format: 1 as const, source: sha256Hex(tree.source, 'answers pending'), delta };
    const treeName = await step('write', async () => {
      const name = await writeManifest(staging, {}, record, head);
      return [name, 'manifest.json, no deploy configs until the answers asked again follow'] as const;
    });
    const what = ' (what read the change is answered live until precomputed)';
    await swapStep(step, distDir, staging, treeName, what, false);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

/** What an origin holding the base's catalog makes a first tree's catalog from (TreeDelta): none when many records changed. */
function deltaCatalog(catalog: Catalog, changes: AnswerChanges): Pick<TreeDelta, 'versions' | 'users'> {
  if (changes.records.length > DELTA_VERSIONS_MAX) return {};
  const versions = changes.records.flatMap((id) => catalog.byId.get(id) ?? []);
  return changes.users ? { versions, users: [...catalog.users.values()] } : { versions };
}

/** Starts a staged tree (stageTree), as a step. */
const stageStep = (
  step: Step,
  store: FileStore,
  stagingDir: string,
  dataDir: string,
  catalog: Catalog,
  catalogText: Uint8Array,
  brandSources: LoadedBrandSource[],
) =>
  step('stage', async () => {
    const copied = await stageTree(store, stagingDir, dataDir, catalog, brandSources, catalogText);
    return [undefined, `${catalog.versions.length} versions, ${copied} JARs new to dist/files`] as const;
  });

/** Writes a staged tree's manifest and build record; returns the tree's name (its manifest's digest). */
async function writeManifest(
  stagingDir: string,
  routes: Record<string, EntryOrText<RouteEntry>>,
  record: BuildRecord,
  head: ManifestHead,
): Promise<string> {
  // Encoded once, for its digest (the tree's name) and the file: megabytes at 1,000 versions.
  const manifest = Buffer.from(manifestText(head, Object.entries(routes)));
  await writeFile(join(stagingDir, 'manifest.json'), manifest);
  await writeFile(join(stagingDir, BUILD_RECORD), JSON.stringify(record));
  return sha256Hex(manifest).slice(0, 20);
}

/** Points dist/current at the staged tree (swapTree), as a step. */
const swapStep = (step: Step, distDir: string, stagingDir: string, treeName: string, what: string, prune = true) =>
  step('swap', async () => {
    const dir = await swapTree(distDir, stagingDir, treeName, prune);
    return [dir, `${join(distDir, 'current')} -> ${dir}${what}`] as const;
  });

/** The previous tree's site routes (their files are in the store). */
function carryRoutes(previousRoutes: ReadonlyMap<string, string>, paths: readonly string[]) {
  const routes: Record<string, string> = {};
  for (const path of paths) {
    const entry = previousRoutes.get(path);
    if (entry) routes[path] = entry;
  }
  return routes;
}

/**
 * Entries taken from the previous tree's manifest as text, parsed for the deploy configs. They are
 * the build's own output, checked by the tree's name (the manifest's digest) when read.
 */
function parsedEntries(routes: Record<string, EntryOrText<RouteEntry>>): Record<string, RouteEntry> {
  const parsed: Record<string, RouteEntry> = {};
  for (const [path, entry] of Object.entries(routes))
    parsed[path] = typeof entry === 'string' ? (JSON.parse(entry) as RouteEntry) : entry;
  return parsed;
}

/** What a tree is made from; the same digest means the same tree (`--if-changed` then skips the build). */
function inputDigest(inputs: {
  site: string | null;
  deploy: DeployOptions;
  rateLimit: RateLimitPolicy | null;
  catalog: Catalog;
  brandRecords: unknown[];
  answerCode: string;
}): string {
  const { site, deploy, rateLimit, catalog, brandRecords, answerCode } = inputs;
  return sha256Hex(
    JSON.stringify({
      TREE_FORMAT,
      // Other code may answer otherwise: after `git pull`, `npm start`'s `--if-changed` rebuilds.
      answerCode,
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
async function prerenderWithProgress(
  ctx: AppContext,
  store: FileStore,
  paths: string[],
  kept: ReadonlyMap<string, string>,
  log: (line: string) => void,
) {
  let reported = 0;
  const { prerender } = await import('./prerender.ts');
  const { routes, reused, twins } = await prerender(
    ctx,
    store,
    paths,
    (done) => {
      if (done === paths.length || done - reported >= paths.length / 4) {
        reported = done;
        if (done < paths.length)
          log(`[build]   prerender: ${done}/${paths.length}, ${ctx.renderer.renders()} images rendered`);
      }
    },
    kept,
  );
  return [
    routes,
    `${paths.length} answers, ${paths.length - reused} answered anew (${twins} as their twin without ?channel=release), ${reused} unchanged from the previous tree; ${ctx.renderer.renders()} images rendered (the rest from the build cache)`,
  ] as const;
}

/** The human site's pages, scripts and styles (or none with SITE=off). */
async function siteStep(store: FileStore, stagingDir: string, cacheDir: string, site: string | null) {
  if (site === null) return [{}, 'off (SITE=off)'] as const;
  const result = await buildSite(store, stagingDir, cacheDir, site);
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
