import { statSync, watch, type FSWatcher } from 'node:fs';
import { readFile, readlink, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { ENCODINGS } from './http/compress.ts';
import { createCatalog, type Catalog } from './versions/catalog.ts';
import { DataError, parseFile, readJsonFile } from './data-files.ts';
import { describeIssues } from './describe-issues.ts';
import { parseJson, splitManifest } from './manifest-text.ts';
import { CatalogVersion, UserProfiles } from './versions/schema.ts';
import { BrandSourceRecord, brandKey } from './brands/source-record.ts';
import { AnswerChanges, changeSets, isSitePath, readsChange } from './answer-inputs.ts';
import {
  describeOlderCatalog,
  noOlderCatalogNotes,
  readOlderUsers,
  readOlderVersion,
  type OlderCatalogNotes,
} from './versions/older-catalog.ts';

/**
 * dist/ layout: `current` is a symlink to `trees/<name>`, swapped atomically by the build. A tree
 * holds `manifest.json` (URL path -> file, status, headers), `catalog.json` (the validated records
 * the live routes answer from) and `files/`, content-addressed, so a JAR is stored once.
 */
export const CURRENT_LINK = 'current';
export const TREES_DIR = 'trees';
export const FILES_DIR = 'files';
/** Where the site's "page not found" page (site/src/pages/404.astro) is in the manifest. */
export const NOT_FOUND_PAGE = '/404';
/** A tree's folder name: the start of its manifest's sha256. */
export const TREE_NAME = /^[0-9a-f]{20}$/;

export const RouteEntry = z.strictObject({
  file: z.string().regex(/^files\/[0-9a-f]{64}\.[a-z0-9]+$/),
  status: z.int().min(200).max(599),
  size: z.int().nonnegative(),
  headers: z.record(z.string(), z.string()),
  /** Codings kept beside `file` (`<file>.br`, `<file>.gz`), for JSON and SVG answers. */
  encodings: z.array(z.enum(ENCODINGS)).optional(),
});
export type RouteEntry = z.infer<typeof RouteEntry>;

export const Manifest = z.strictObject({
  format: z.literal(1),
  /** Digest of the inputs: a build whose inputs did not change can be skipped. */
  source: z.string(),
  routes: z.record(z.string(), RouteEntry),
});
export type Manifest = z.infer<typeof Manifest>;

export const CatalogFile = z.strictObject({
  versions: z.array(CatalogVersion),
  users: UserProfiles,
  brands: z.array(BrandSourceRecord),
});
export type CatalogFile = z.infer<typeof CatalogFile>;

export type Tree = {
  dir: string;
  /** Validated when first used (a lookup of a version by id, a live route): a release answered from the manifest alone never pays for it. */
  readonly catalog: Catalog;
  /** Brand sources by `brand/variant`; their bytes are tree files too. */
  readonly brands: ReadonlyMap<string, BrandSourceRecord>;
  routes: ReadonlyMap<string, RouteEntry>;
  source: string;
};

export const jarFile = (treeDir: string, sha256: string) => join(treeDir, FILES_DIR, `${sha256}.jar`);

/** The most versions a first tree's head carries (TreeDelta.versions). */
export const DELTA_VERSIONS_MAX = 100;

/**
 * A release's first tree (build/build.ts) holds no routes of its own: it serves its base tree's
 * answers but those that read its changes (AnswerChanges), which the live routes answer from its
 * catalog until the next tree holds them precomputed; and the base's site pages when `site`.
 */
export const TreeDelta = z.strictObject({
  base: z.string().regex(TREE_NAME),
  changes: AnswerChanges,
  site: z.boolean(),
  /**
   * The new data's versions among the changed records, and all users when they changed: an origin
   * that holds its base's catalog makes this tree's from it (catalogAfterDelta) rather than parsing
   * catalog.json (5 MB at 10,000 versions). Absent when many records changed.
   */
  versions: z.array(CatalogVersion).max(DELTA_VERSIONS_MAX).optional(),
  users: UserProfiles.optional(),
});
export type TreeDelta = z.infer<typeof TreeDelta>;

/** What opening a tree checks of its manifest at once; each route is checked on first use (RouteTable). */
export const ManifestHead = z.strictObject({ format: z.literal(1), source: z.string(), delta: TreeDelta.optional() });
export type ManifestHead = z.infer<typeof ManifestHead>;

/**
 * Opens a tree for the origin. Its share of a release is what stands between the swap and the first
 * answer, so only what every request needs is done here: the manifest is read and split into its
 * routes' lines and its head checked, and catalog.json read (before the build may prune the tree)
 * unless the tree's catalog can be made from the current one's (a release's first tree). Routes
 * are validated one by one when first asked for, catalog.json when the catalog is first used (at
 * 10,000 versions, validating all of them up front took 0.9 s). Anything invalid throws DataError
 * where it is used: that request answers 500 and is logged, and the others are answered. A catalog
 * written by older code is read with what it lacks made good (versions/older-catalog.ts), said
 * once with `warn` (default stderr).
 */
export async function openTree(
  dir: string,
  previous?: Tree,
  warn: (line: string) => void = (line) => console.warn(line),
): Promise<Tree> {
  const manifestFile = join(dir, 'manifest.json');
  const catalogFile = join(dir, 'catalog.json');
  const { head, routes } = await readManifest(manifestFile);
  const { delta } = head;
  const made = previous && madeCatalogs.get(previous);
  // The validated versions this tree's catalog may reuse: the previous tree's, or, when that one was
  // replaced before its catalog was made (releases in a row), the catalog it would have reused.
  // One catalog, never a chain of trees.
  const reusable = made ?? (previous && reusableCatalogs.get(previous));
  const fromBase =
    delta?.versions && made && basename(previous.dir) === delta.base
      ? { delta, versions: delta.versions, made, brands: previous.brands }
      : undefined;
  const catalogText = fromBase ? '' : await readFile(catalogFile, 'utf8');
  const catalog = lazily(() => {
    const older = noOlderCatalogNotes();
    const opened = fromBase
      ? { catalog: catalogAfterDelta(fromBase.made, fromBase.delta, fromBase.versions), brands: fromBase.brands }
      : parseTreeCatalog(parseJson(catalogText, catalogFile), catalogFile, reusable?.byId, older);
    const said = describeOlderCatalog(dir, older);
    if (said) warn(said);
    madeCatalogs.set(tree, opened.catalog);
    reusableCatalogs.delete(tree);
    return opened;
  });
  const tree: Tree = {
    dir,
    get catalog() {
      return catalog().catalog;
    },
    get brands() {
      return catalog().brands;
    },
    routes: delta ? await routesAfterDelta(dir, delta, previous, () => tree.catalog) : routes,
    source: head.source,
  };
  if (reusable) reusableCatalogs.set(tree, reusable);
  return tree;
}

/** A first tree's catalog: its base's, with the changed records replaced by the head's versions. */
function catalogAfterDelta(base: Catalog, delta: TreeDelta, versions: readonly CatalogVersion[]): Catalog {
  const changed = new Set(delta.changes.records);
  const kept = base.versions.filter((version) => !changed.has(version.id));
  return createCatalog([...kept, ...versions], delta.users ?? [...base.users.values()]);
}

/**
 * A release's first tree: its base's routes (the origin's current tree's when that is the base,
 * else read from the base's manifest) but those that read the release's changes.
 */
async function routesAfterDelta(
  dir: string,
  delta: TreeDelta,
  previous: Tree | undefined,
  catalog: () => Catalog,
): Promise<ReadonlyMap<string, RouteEntry>> {
  const routes =
    previous && basename(previous.dir) === delta.base ? previous.routes : await readBaseRoutes(dir, delta.base);
  const changes = changeSets(delta.changes);
  return new KeptRoutes(routes, (path) =>
    isSitePath(path) ? delta.site : !readsChange(path, changes, { status: () => routes.get(path)!.status, catalog }),
  );
}

/** A manifest's checked head and its routes, split into lines (each checked when first looked up). */
async function readManifest(file: string): Promise<{ head: ManifestHead; routes: RouteTable }> {
  const manifest = splitManifest(await readFile(file, 'utf8'), file);
  return { head: parseFile(ManifestHead, manifest.head, file), routes: new RouteTable(manifest.routes, file) };
}

/** The routes of the tree `base` beside `dir`, which must be a full tree. */
async function readBaseRoutes(dir: string, base: string): Promise<RouteTable> {
  const file = join(dirname(dir), base, 'manifest.json');
  const { head, routes } = await readManifest(file);
  if (head.delta) throw new DataError(`${file}: a base tree has a base`);
  return routes;
}

/** The catalogs made so far, by tree: what the next tree's catalog may reuse. */
const madeCatalogs = new WeakMap<Tree, Catalog>();
/** By tree, the catalog its own may reuse (openTree): for the next tree when this one's is never made. */
const reusableCatalogs = new WeakMap<Tree, Catalog>();

/** A tree's catalog.json, validated: what the live routes answer from, and what the site is built from. */
export async function readTreeCatalog(dir: string): Promise<Pick<Tree, 'catalog' | 'brands'>> {
  const catalogFile = join(dir, 'catalog.json');
  return parseTreeCatalog(await readJsonFile(catalogFile), catalogFile);
}

/** catalog.json with its versions checked one by one below. */
const CatalogFileHead = CatalogFile.extend({ versions: z.array(z.unknown()) });

/**
 * A release adds one version to thousands: a version equal, field for field, to one `earlier`
 * validated (the previous tree's) is that one, and only the others go through CatalogVersion. Equal
 * is enough: a validated version is what CatalogVersion makes of itself.
 */
function parseTreeCatalog(
  raw: unknown,
  file: string,
  earlier?: ReadonlyMap<string, CatalogVersion>,
  older: OlderCatalogNotes = noOlderCatalogNotes(),
): Pick<Tree, 'catalog' | 'brands'> {
  const fits = CatalogFileHead.safeParse(raw);
  const head = fits.success ? fits.data : parseFile(CatalogFileHead, readOlderUsers(raw, older), file);
  const jarPath = (sha256: string) => jarFile(dirname(file), sha256);
  const versions = head.versions.map((version, index) => {
    const known = earlier && isObject(version) && typeof version.id === 'string' ? earlier.get(version.id) : undefined;
    if (known && sameRecord(version as Record<string, unknown>, known)) return known;
    const parsed = CatalogVersion.safeParse(version);
    if (parsed.success) return parsed.data;
    const made = readOlderVersion(version, jarPath, older);
    if (made) return made;
    const issues = parsed.error.issues.map((issue) => ({ ...issue, path: ['versions', index, ...issue.path] }));
    throw new DataError(`${file}: ${describeIssues(issues)}`);
  });
  return { catalog: createCatalog(versions, head.users), brands: brandMap(head.brands) };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Same keys, same values; arrays (of strings) compared item by item. */
function sameRecord(raw: Record<string, unknown>, known: object): boolean {
  const keys = Object.keys(raw);
  if (keys.length !== Object.keys(known).length) return false;
  for (const key of keys) {
    const a = raw[key];
    const b = (known as Record<string, unknown>)[key];
    if (a === b) continue;
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length || a.some((item, i) => item !== b[i]))
      return false;
  }
  return true;
}

/** `make` run on first call (then let go, with what it holds); its value, or its error, is kept and given to every later call. */
function lazily<T>(make: () => T): () => T {
  let pending: (() => T) | null = make;
  let outcome: { value: T } | { error: unknown } | null = null;
  return () => {
    if (!outcome) {
      try {
        outcome = { value: pending!() };
      } catch (error) {
        outcome = { error };
      }
      pending = null;
    }
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  };
}

/** Routes looked up one by one (`get`, `has`); iterating looks up each of `paths()`, in its order. */
abstract class RouteLookup implements ReadonlyMap<string, RouteEntry> {
  abstract get(path: string): RouteEntry | undefined;
  abstract has(path: string): boolean;
  protected abstract paths(): Iterable<string>;

  get size(): number {
    return this.#all().size;
  }

  #all(): Map<string, RouteEntry> {
    const all = new Map<string, RouteEntry>();
    for (const path of this.paths()) {
      const entry = this.get(path);
      if (entry) all.set(path, entry);
    }
    return all;
  }

  entries() {
    return this.#all().entries();
  }

  keys() {
    return this.#all().keys();
  }

  values() {
    return this.#all().values();
  }

  [Symbol.iterator]() {
    return this.entries();
  }

  forEach(
    callback: (entry: RouteEntry, path: string, map: ReadonlyMap<string, RouteEntry>) => void,
    thisArg?: unknown,
  ) {
    for (const [path, entry] of this.#all()) callback.call(thisArg, entry, path, this);
  }
}

/**
 * A manifest's routes, each parsed (from its line's text) and validated with RouteEntry the first
 * time it is looked up, then kept: a request touches one or two of the tens of thousands.
 * Iterating validates them all.
 */
export class RouteTable extends RouteLookup {
  readonly #raw: ReadonlyMap<string, unknown>;
  readonly #file: string;
  readonly #checked = new Map<string, RouteEntry>();

  constructor(raw: ReadonlyMap<string, unknown>, file: string) {
    super();
    this.#raw = raw;
    this.#file = file;
  }

  get(path: string): RouteEntry | undefined {
    const checked = this.#checked.get(path);
    if (checked || !this.#raw.has(path)) return checked;
    const raw = this.#raw.get(path);
    const where = `${this.#file}: routes[${JSON.stringify(path)}]`;
    const entry = parseFile(RouteEntry, typeof raw === 'string' ? parseJson(raw, where) : raw, where);
    this.#checked.set(path, entry);
    return entry;
  }

  has(path: string): boolean {
    return this.#raw.has(path);
  }

  override get size(): number {
    return this.#raw.size;
  }

  protected paths() {
    return this.#raw.keys();
  }
}

/** The routes of `all` that `keeps` keeps, each asked once. */
class KeptRoutes extends RouteLookup {
  readonly #all: ReadonlyMap<string, RouteEntry>;
  readonly #keeps: (path: string) => boolean;
  readonly #kept = new Map<string, boolean>();

  constructor(all: ReadonlyMap<string, RouteEntry>, keeps: (path: string) => boolean) {
    super();
    this.#all = all;
    this.#keeps = keeps;
  }

  has(path: string): boolean {
    if (!this.#all.has(path)) return false;
    let kept = this.#kept.get(path);
    if (kept === undefined) this.#kept.set(path, (kept = this.#keeps(path)));
    return kept;
  }

  get(path: string): RouteEntry | undefined {
    return this.has(path) ? this.#all.get(path) : undefined;
  }

  protected paths() {
    return this.#all.keys();
  }
}

/** The tree `dist/current` points at, or null before the first build. */
export async function currentTreeDir(distDir: string): Promise<string | null> {
  const target = await readlink(join(distDir, CURRENT_LINK)).catch(() => null);
  return target === null ? null : resolve(distDir, target);
}

export async function readManifestSource(distDir: string): Promise<string | null> {
  const dir = await currentTreeDir(distDir);
  if (!dir) return null;
  const file = join(dir, 'manifest.json');
  try {
    const parsed = ManifestHead.safeParse(splitManifest(await readFile(file, 'utf8'), file).head);
    return parsed.success ? parsed.data.source : null;
  } catch {
    return null;
  }
}

/** A tree that failed to open is said again at most this often while `current` still points at it. */
const REPEAT_FAILURE_MS = 60_000;
/** How long after a swap the new tree's catalog is prepared: the requests that noticed the release are answered first. */
const PREPARE_CATALOG_AFTER_MS = 500;
/** Looks in a row while watch events keep coming; the poll takes over after that. */
const MAX_LOOKS_IN_A_ROW = 8;

export type FollowOptions = {
  /** How often `current` is read when no watch event came (fs.watch misses some: NFS, dist/ recreated). */
  intervalMs?: number;
  now?: () => number;
  /** Where a watcher failure is said, once; default stderr. */
  warn?: (line: string) => void;
};

/**
 * Follows `dist/current`: watches dist/ (inotify on Linux: the swap renames a new link onto
 * `current`) and opens the new tree on the event, and also reads the link every `intervalMs` in case
 * an event was missed or the watcher failed. A burst of events is one or two looks. A request in
 * flight keeps the tree it started with; old trees stay on disk for a while. A tree that fails to
 * open is reported once, then at most once a minute, and tried again less and less often (up to
 * once a minute); a link that moves on to another tree is tried at once.
 */
export function followCurrentTree(
  distDir: string,
  initial: Tree,
  onError: (error: unknown, dir: string) => void,
  options: FollowOptions = {},
) {
  const intervalMs = options.intervalMs ?? 200;
  const now = options.now ?? Date.now;
  const warn = options.warn ?? ((line: string) => console.warn(line));
  let tree = initial;
  let stopped = false;
  let failing: { dir: string; failures: number; retryAt: number; saidAt: number } | null = null;

  async function look() {
    let dir: string | null = null;
    try {
      dir = await currentTreeDir(distDir);
      if (!dir || dir === tree.dir) return;
      if (failing?.dir === dir && now() < failing.retryAt) return;
      const opened = await openTree(dir, tree, warn);
      failing = null;
      if (stopped) return;
      tree = opened;
      prepareCatalog(opened);
    } catch (error) {
      const failed = dir ?? distDir;
      const time = now();
      const again = failing?.dir === failed ? failing : null;
      const failures = (again?.failures ?? 0) + 1;
      const say = !again || time - again.saidAt >= REPEAT_FAILURE_MS;
      failing = {
        dir: failed,
        failures,
        retryAt: time + Math.min(REPEAT_FAILURE_MS, intervalMs * 2 ** failures),
        saidAt: say ? time : again.saidAt,
      };
      if (say) onError(error, failed);
    }
  }

  /**
   * The catalog is validated a little after the swap rather than at the first live request that
   * needs it; the release's own answers, from the manifest, come first. An invalid one is said here.
   */
  const prepareCatalog = (opened: Tree) => {
    setTimeout(() => {
      if (opened !== tree) return; // already replaced
      try {
        void opened.catalog;
      } catch (error) {
        warn(
          `[tree] ${opened.dir}: answers that need the catalog fail until the next tree: ${(error as Error).message}`,
        );
      }
    }, PREPARE_CATALOG_AFTER_MS).unref();
  };

  let looking = false;
  let lookAgain = false;
  /** Looks now, or once more right after the look under way (which may have read the link before it moved). */
  function check() {
    if (stopped) return;
    if (looking) {
      lookAgain = true;
      return;
    }
    looking = true;
    void (async () => {
      for (let i = 0; i < MAX_LOOKS_IN_A_ROW && !stopped; i++) {
        lookAgain = false;
        await look();
        if (!lookAgain) break;
      }
    })()
      .catch((error: unknown) => onError(error, distDir))
      .finally(() => (looking = false));
  }

  let watcher: FSWatcher | null = null;
  let watchedIno = 0;
  let watchFailed = false;
  const stopWatching = () => {
    watcher?.close();
    watcher = null;
  };
  const failWatching = (error: unknown) => {
    stopWatching();
    if (watchFailed) return;
    watchFailed = true;
    warn(
      `[tree] cannot watch ${distDir} (${(error as Error).message}); rebuilds are noticed by polling every ${intervalMs} ms`,
    );
  };
  const startWatching = () => {
    try {
      const { ino } = statSync(distDir);
      watcher = watch(distDir, { persistent: false }, (_event, name) => {
        if (name === null || name === CURRENT_LINK) check();
      });
      watcher.on('error', failWatching);
      watchedIno = ino;
    } catch (error) {
      failWatching(error);
    }
  };
  /** dist/ removed or recreated: an inotify watch stays on the old directory, so watch the new one. */
  let rewatching = false;
  const keepWatching = async () => {
    if (rewatching) return;
    rewatching = true;
    try {
      const ino = await stat(distDir).then(
        (s) => s.ino,
        () => null,
      );
      if (stopped) return;
      if (watcher && ino !== watchedIno) stopWatching();
      if (!watcher && ino !== null) startWatching();
    } finally {
      rewatching = false;
    }
  };

  startWatching();
  prepareCatalog(initial);
  const timer = setInterval(() => {
    check();
    void keepWatching();
  }, intervalMs);
  timer.unref();
  return {
    current: () => tree,
    stop: () => {
      stopped = true;
      clearInterval(timer);
      stopWatching();
    },
  };
}

export function brandMap(brands: readonly BrandSourceRecord[]): ReadonlyMap<string, BrandSourceRecord> {
  return new Map(brands.map((b) => [brandKey(b.brand, b.variant), b]));
}
