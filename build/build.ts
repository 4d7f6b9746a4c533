import { mkdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ENCODER_REVISION } from '../server/brands/formats.ts';
import { DEFAULT_DEPLOY, DEFAULT_PUBLIC_URL, DEFAULT_RATE_LIMIT, type DeployOptions } from '../server/config.ts';
import type { RateLimitPolicy } from '../server/http/rate-limit.ts';
import { createCatalog, loadCatalog, type Catalog } from '../server/versions/catalog.ts';
import { sha256Hex } from '../server/helpers/digest.ts';
import { brandMap } from '../server/tree/format.ts';
import { deltaHead } from '../server/tree/delta.ts';
import { NO_ROUTES, RouteTable } from '../server/tree/routes.ts';
import type { EntryOrText } from '../server/tree/manifest-text.ts';
import type { RouteEntry } from '../server/tree/format.ts';
import { currentTreeDir, readManifestSource } from '../server/tree/open.ts';
import { diffCatalogs, isEmptyChange, type AnswerChanges } from '../server/tree/answer-inputs.ts';
import { loadBrandSources, type LoadedBrandSource } from '../server/brands/sources.ts';
import { loadProject, type LoadedProject } from '../server/project/load.ts';
import { listProjectPaths } from '../server/project/paths.ts';
import type { AppContext } from '../server/context.ts';
import { OPENAPI_PATH } from '../server/helpers/openapi-path.ts';
import { listBrandPaths, listVersionPaths } from './paths.ts';
import { acquireBuildLock } from './build-lock.ts';
import { recoverInterruptedChanges } from './version-commit.ts';
import { buildSite, siteKey, siteRendererReady, siteSourceDigest, type PreviousSite } from './site.ts';
import type { SiteRender } from '../site/src/lib/tree.ts';
import { catalogFileText, stageTree } from './stage.ts';
import {
  readBuiltTree,
  readPreviousTree,
  reusedAnswers,
  type BuildRecord,
  type BuiltTree,
} from '../server/tree/previous.ts';
import { answerCodeDigest } from './source-files.ts';
import { VERIFIED_DATA, openVerifiedData } from './verified-data.ts';
import { javaClaimWarnings } from './java-claims.ts';
import { removeAbandonedStaging } from '../server/tree/swap.ts';
import { withStagingDir, type Step } from './staging-dir.ts';
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
  /** What the generated nginx.conf names (default: one origin on :3000, nginx on :8080). */
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
    // What a killed release or edit left half-written in data/: finished or undone before it is read.
    const recovered = await recoverInterruptedChanges(options.dataDir);
    for (const [how, ids] of Object.entries(recovered))
      if (ids.length > 0) options.log?.(`[build] data/: ${how} the interrupted change of ${ids.join(', ')}`);

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

/** What the steps of one build share. */
type Build = {
  dataDir: string;
  distDir: string;
  cacheDir: string;
  withSite: boolean;
  deploy: DeployOptions;
  rateLimit: RateLimitPolicy | null;
  log: (line: string) => void;
  step: Step;
};

function buildSettings(options: BuildOptions): Build {
  const { dataDir, distDir, site: withSite = true, log = () => {} } = options;
  return {
    dataDir,
    distDir,
    cacheDir: options.cacheDir ?? join(distDir, '.cache'),
    withSite,
    // The tree's name digests the deployment settings, but not dist/'s own place: the same data built
    // into another dist/ is the same tree, its nginx.conf naming the files where they are.
    deploy: options.deploy ?? DEFAULT_DEPLOY,
    rateLimit: options.rateLimit === undefined ? DEFAULT_RATE_LIMIT : options.rateLimit,
    log,
    step: timed(log),
  };
}

/**
 * The steps of a build: a change served first (its delta tree), load, then a delta tree of what else
 * changed, the API's tree and, when the site is not yet this data's, the site's tree.
 */
async function buildLocked(options: BuildOptions): Promise<BuildResult> {
  const build = buildSettings(options);
  // The tree a change was served from: data/ has the change, and the tree need not be read again.
  // When no tree could serve it first, the change is made to data/ as loaded.
  const servedFrom = options.change ? await serveChangeFirst(build, options.change) : null;
  const loaded = await loadStep(build, servedFrom ? undefined : options.change);
  const source = inputDigest(build, loaded);
  const currentDir = await currentTreeDir(build.distDir);
  if (options.ifChanged && (await readManifestSource(build.distDir)) === source && currentDir) {
    build.log(`[build] unchanged since the current tree: ${currentDir}`);
    await loaded.verified.save();
    return { treeDir: currentDir, routes: 0, skipped: true, rendered: 0 };
  }
  const plan = await planTrees(build, loaded, source, currentDir, servedFrom);
  await swapDeltaOfPrevious(build, plan);
  // The site in the same tree when its renderer is compiled already (a release: its pages take a
  // second); else the API first, with the previous site, while Astro compiles it (ten seconds).
  const siteNow = !plan.siteDone && (await siteRendererReady(build.cacheDir, plan.loaded.site!));
  const api = await apiTreeStep(build, plan, siteNow);
  const result =
    plan.siteDone || siteNow
      ? { treeDir: api.treeDir, routes: api.routes, skipped: false, rendered: api.rendered }
      : await siteTreeStep(build, plan, api);
  // What loading data/ read and checked, for the next build: written once the tree is served.
  await loaded.verified.save();
  return result;
}

type Loaded = Awaited<ReturnType<typeof loadStep>>;

/** data/ loaded; `change` made to its catalog when it could not be served first. */
function loadStep(build: Build, change: ((catalog: Catalog) => Promise<Catalog>) | undefined) {
  const { dataDir, cacheDir, withSite } = build;
  return build.step('load', async () => {
    // Records, changelogs, JARs, brand sources and the build's own sources read by an earlier build
    // and unchanged since (same file, size and times) are not read again.
    const verified = await openVerifiedData(join(cacheDir, VERIFIED_DATA), dataDir);
    const loaded = {
      catalog: await loadCatalog(dataDir, verified.memory),
      brandSources: await loadBrandSources(dataDir, verified.memory),
      project: await loadProject(dataDir, verified.memory),
      site: withSite ? await siteSourceDigest(verified.memory) : null,
      answerCode: await answerCodeDigest(verified.memory),
    };
    if (change) loaded.catalog = await change(loaded.catalog);
    for (const line of javaClaimWarnings(loaded.catalog)) build.log(line);
    const brandRecords = loaded.brandSources.map(({ bytes: _bytes, ...record }) => record);
    return [
      { ...loaded, brandRecords, verified },
      `${loaded.catalog.versions.length} versions, ${loaded.catalog.users.size} users, ${loaded.brandSources.length} brand variants${loaded.project ? `, project ${JSON.stringify(loaded.project.record.name)}` : ''} from ${dataDir}`,
    ] as const;
  });
}

type Plan = Awaited<ReturnType<typeof planTrees>>;

/** What the trees of this build are made of, and what of the current tree they reuse. */
async function planTrees(
  build: Build,
  loaded: Loaded,
  source: string,
  currentDir: string | null,
  servedFrom: BuiltTree | null,
) {
  const { catalog, brandRecords, site } = loaded;
  const project = loaded.project?.record;
  // The answers' code, and what answers print besides the catalog: the feeds' PUBLIC_URL links, and
  // the project (feeds' titles, /api/project), rarely changed: no answer is reused across its change.
  const code = sha256Hex(loaded.answerCode, JSON.stringify({ publicUrl: build.deploy.publicUrl ?? null, project }));
  const previous = await readPreviousTree(currentDir, code, { catalog, brands: brandRecords }, servedFrom);
  // A previous tree whose answers are reused was built by this code; else its record says whose.
  const otherCode = previous?.changes ? null : await describeOtherCode(currentDir, code);
  if (otherCode) build.log(otherCode);
  // Encoded once: hashed twice and written into each staged tree.
  const catalogText = Buffer.from(catalogFileText(catalog, brandRecords, project));
  const catalogDigest = sha256Hex(catalogText);
  const siteNow = site === null ? null : siteKey(site, catalogText, sitePublicUrl(build));
  // The API goes first, with the previous tree's site, then the site of this data in a second tree:
  // a release is served without waiting for Astro. A tree whose site is not yet this data's has its
  // own source, so `--if-changed` after a crash between the two swaps builds the site.
  const carried = siteNow !== null ? (previous?.record.site ?? null) : null;
  return {
    loaded,
    source,
    code,
    previous,
    catalogText,
    catalogDigest,
    siteNow,
    carried,
    siteDone: siteNow === null || carried?.key === siteNow,
    deploy: { ...build.deploy, distDir: build.deploy.distDir ?? resolve(build.distDir) },
    store: await openFileStore(build.distDir, previous?.jars ?? []),
  };
}

/**
 * The delta tree of what changed since the current tree, served before the answers are rendered.
 * Not when the current tree serves this catalog already (a change served first), nor when the
 * brand images changed: the origins would render them all.
 */
async function swapDeltaOfPrevious(build: Build, plan: Plan) {
  const { previous, catalogDigest } = plan;
  const changes = previous?.changes;
  if (!previous || !changes || changes.brands || isEmptyChange(changes) || previous.servedCatalog === catalogDigest)
    return;
  const record = { code: plan.code, catalog: catalogDigest, site: plan.carried, base: basename(previous.dir) };
  const { store, catalogText, source } = plan;
  await swapDeltaTree(build, { store, catalog: plan.loaded.catalog, catalogText, record, changes, source });
}

/**
 * The API's answers (rendered anew or reused), and this data's site when `withSite`; else the
 * previous tree's site until this data's follows (siteTreeStep).
 */
async function apiTreeStep(build: Build, plan: Plan, withSite: boolean) {
  const { catalog, brandRecords, brandSources } = plan.loaded;
  const project = plan.loaded.project ?? undefined;
  const { previous, carried, siteDone, source } = plan;
  // The app that answers (h3, the renderer, the storage layer) is loaded once a release's delta
  // tree is served: compiling it before took that tree a tenth of a second.
  const answering = Promise.all([
    import('../server/context.ts'),
    import('../server/byte-cache.ts'),
    import('../server/storage.ts'),
  ]);
  const brands = brandMap(brandRecords);
  const paths = await build.step('list paths', async () => {
    const list = [
      ...listVersionPaths(catalog),
      ...listBrandPaths(brands),
      ...listProjectPaths(project?.record),
      '/api/charts/example',
      OPENAPI_PATH,
    ];
    return [list, `${list.length} routes`] as const;
  });
  const kept = await reusedAnswers(previous, paths, catalog);
  const carriedRoutes = carried && previous ? carryRoutes(await previous.routes(), Object.keys(carried.pages)) : {};
  const { treeDir, staged } = await withStagingDir(build, {
    stage: (stagingDir) => stageStep(build, plan.store, stagingDir, catalog, plan.catalogText, brandSources, project),
    fill: async (stagingDir) => {
      const [{ createAppContext }, { createByteCache }, { createFileStorage, createMemoryStorage }] = await answering;
      const tree = { dir: stagingDir, catalog, brands, routes: NO_ROUTES, source, project: project?.record };
      // The build answers only finite, public routes: state (servers, samples) starts empty.
      const ctx = createAppContext(createMemoryStorage(), {
        tree: () => tree,
        imageCache: createByteCache(createFileStorage(build.cacheDir), 'brand-images', { keepForever: true }),
        publicUrl: build.deploy.publicUrl,
      });
      const answers = await build.step('prerender', () =>
        prerenderWithProgress(ctx, plan.store, paths, kept, build.log),
      );
      const site = withSite ? await siteRoutesStep(build, plan, stagingDir, answers) : undefined;
      return {
        routes: { ...answers, ...(site ? site.routes : carriedRoutes) },
        record: { code: plan.code, catalog: plan.catalogDigest, site: site?.record ?? carried },
        head: { format: 1, source: siteDone || site ? source : sha256Hex(source, 'site pending') },
        answers,
        rendered: ctx.renderer.renders(),
      };
    },
    configs: siteDone || withSite ? { deploy: plan.deploy } : { until: 'the site follows' },
    swapped: siteDone || withSite ? '' : carried ? ' (site follows; the previous one meanwhile)' : ' (site follows)',
  });
  return { treeDir, answers: staged.answers, routes: Object.keys(staged.answers).length, rendered: staged.rendered };
}

/** The same API answers, then this data's site. */
async function siteTreeStep(
  build: Build,
  plan: Plan,
  api: Awaited<ReturnType<typeof apiTreeStep>>,
): Promise<BuildResult> {
  const { catalog, brandSources, project } = plan.loaded;
  const { treeDir, staged } = await withStagingDir(build, {
    stage: (stagingDir) =>
      stageTree(plan.store, stagingDir, build.dataDir, catalog, brandSources, plan.catalogText, project ?? undefined),
    fill: async (stagingDir) => {
      const site = await siteRoutesStep(build, plan, stagingDir, api.answers);
      return {
        routes: { ...api.answers, ...site.routes },
        record: { code: plan.code, catalog: plan.catalogDigest, site: site.record },
        head: { format: 1, source: plan.source },
        pages: Object.keys(site.routes).length,
      };
    },
    configs: { deploy: plan.deploy },
    swapped: '',
  });
  return { treeDir, routes: api.routes + staged.pages, skipped: false, rendered: api.rendered };
}

/** This data's site in the tree staged in `stagingDir`, whose answers are `answers` (the API reference's examples read them). */
async function siteRoutesStep(
  build: Build,
  plan: Plan,
  stagingDir: string,
  answers: Record<string, EntryOrText<RouteEntry>>,
) {
  const { catalog, brandRecords, project, site } = plan.loaded;
  const tree = {
    ...{ dir: stagingDir, catalog, brands: brandMap(brandRecords), project: project?.record },
    routes: new RouteTable(new Map(Object.entries(answers)), 'the staged tree'),
  };
  const previousSite = plan.previous?.record.site
    ? { pages: plan.previous.record.site.pages, routes: await plan.previous.routes() }
    : undefined;
  const built = await build.step('site', () => siteStep(build, plan.store, tree, site!, previousSite));
  return { routes: built.routes, record: { key: plan.siteNow!, pages: built.pages } };
}

/**
 * A change (a release, a user) served before data/ is loaded again: made to the catalog the current
 * tree serves, whose delta tree is swapped in at once; the build then loads data/ (at 10,000
 * versions, 20,000 files checked) and follows with the full trees, which also serve whatever else
 * changed in data/ since the current tree was built. Returns the tree it was served from; null when
 * the current tree cannot be a base (none, a delta tree, not as the build wrote it): the change is
 * then made to data/ as loaded.
 */
async function serveChangeFirst(
  build: Build,
  change: (catalog: Catalog) => Promise<Catalog>,
): Promise<BuiltTree | null> {
  const dir = await currentTreeDir(build.distDir);
  const current = dir ? await readBuiltTree(dir) : null;
  if (!current) return null;
  const served = current.catalog;
  const before = createCatalog(served.versions, served.users);
  const catalog = await change(before);
  const changes = diffCatalogs({ ...served, latest: before.latest }, { catalog, brands: served.brands });
  if (isEmptyChange(changes)) return current;
  const catalogText = Buffer.from(catalogFileText(catalog, served.brands, served.project));
  const record = {
    code: current.record.code,
    catalog: sha256Hex(catalogText),
    site: build.withSite ? current.record.site : null,
    base: basename(current.dir),
  };
  // Never a tree built from data/'s source: `--if-changed` builds after it.
  const source = sha256Hex(record.catalog, 'served before data/ is loaded');
  const store = await openFileStore(build.distDir, current.jars);
  await swapDeltaTree(build, { store, catalog, catalogText, record, changes, source });
  return current;
}

/**
 * A release's delta tree (server/tree/delta.ts): the changed catalog, and a manifest naming its
 * base; no deploy configs: nginx keeps the finished tree's.
 */
async function swapDeltaTree(
  build: Build,
  tree: {
    store: FileStore;
    catalog: Catalog;
    catalogText: Uint8Array;
    record: BuildRecord & { base: string };
    changes: AnswerChanges;
    source: string;
  },
) {
  const { record, changes, catalog } = tree;
  await withStagingDir(build, {
    stage: (stagingDir) => stageStep(build, tree.store, stagingDir, catalog, tree.catalogText, []),
    fill: async () => ({
      routes: {},
      record,
      head: deltaHead(catalog, { base: record.base, changes, site: record.site !== null, source: tree.source }),
    }),
    configs: { until: 'the answers asked again follow' },
    swapped: ' (what read the change is answered live until precomputed)',
    prune: false,
  });
}

/** Starts a staged tree (stageTree), as a step. */
const stageStep = (
  build: Build,
  store: FileStore,
  stagingDir: string,
  catalog: Catalog,
  catalogText: Uint8Array,
  brandSources: LoadedBrandSource[],
  project?: LoadedProject,
) =>
  build.step('stage', async () => {
    const copied = await stageTree(store, stagingDir, build.dataDir, catalog, brandSources, catalogText, project);
    return [undefined, `${catalog.versions.length} versions, ${copied} JARs new to dist/files`] as const;
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

/** What a tree is made from; the same digest means the same tree (`--if-changed` then skips the build). */
function inputDigest({ deploy, rateLimit }: Build, loaded: Loaded): string {
  const { site, catalog, brandRecords, answerCode, project } = loaded;
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
      project: project?.record,
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

/** The human site's pages, scripts and styles: those whose data changed rendered, the rest the previous tree's. */
async function siteStep(
  build: Build,
  store: FileStore,
  tree: SiteRender['tree'],
  sourceDigest: string,
  previous: PreviousSite | undefined,
) {
  const settings = { cacheDir: build.cacheDir, sourceDigest, publicUrl: sitePublicUrl(build) };
  const site = await buildSite(store, tree, settings, previous);
  const pages = Object.keys(site.pages).filter((path) => !path.startsWith('/_site/')).length;
  return [
    site,
    `${pages} pages, ${site.rendered} rendered, ${pages - site.rendered} unchanged from the previous tree; ${Object.keys(site.pages).length - pages} scripts and styles; site ${site.compiled ? 'compiled with Astro' : 'renderer from the build cache'}`,
  ] as const;
}

/** Where the pages' absolute links (Open Graph, Twitter cards) point: PUBLIC_URL, as the feeds'. */
const sitePublicUrl = (build: Build) => build.deploy.publicUrl ?? DEFAULT_PUBLIC_URL;

function timed(log: (line: string) => void): Step {
  return async <T>(name: string, run: () => Promise<readonly [T, string]>): Promise<T> => {
    const started = performance.now();
    const [value, summary] = await run();
    log(`[build] ${name}: ${summary} (${Math.round(performance.now() - started)} ms)`);
    return value;
  };
}
