import { readFile, readlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { createCatalog, type Catalog } from '../versions/catalog.ts';
import { parseFile, readJsonFile, DataError, isJsonObject } from '../data-files.ts';
import { describeIssues } from '../helpers/describe-issues.ts';
import { STDERR_LINES, type Log } from '../helpers/log.ts';
import { CatalogVersion } from '../versions/schema.ts';
import type { BrandSourceRecord } from '../brands/source-record.ts';
import type { ProjectRecord } from '../project/schema.ts';
import { CURRENT_LINK, CatalogFile, ManifestHead, brandMap, jarFile } from './format.ts';
import { parseJson, splitManifest } from './manifest-text.ts';
import { readManifest, type RouteLookup } from './routes.ts';
import { catalogAfterDelta, routesAfterDelta } from './delta.ts';
import {
  describeOlderCatalog,
  noOlderCatalogNotes,
  readOlderUsers,
  readOlderVersion,
  type OlderCatalogNotes,
} from './older-catalog.ts';

export type Tree = {
  dir: string;
  /** Validated when first used (a lookup of a version by id, a live route): a release answered from the manifest alone never pays for it. */
  readonly catalog: Catalog;
  /** Brand sources by `brand/variant`; their bytes are tree files too. */
  readonly brands: ReadonlyMap<string, BrandSourceRecord>;
  /** data/project.json as built (its icon's bytes are a tree file); undefined without one. */
  readonly project?: ProjectRecord | undefined;
  routes: RouteLookup;
  source: string;
  /** Set by openTree: how far its catalog was made, which the tree opened after it reuses. */
  readonly opened?: OpenedCatalog;
};

export type TreeCatalog = Pick<Tree, 'catalog' | 'brands' | 'project'>;

/**
 * Opens a tree for the origin. Its share of a release is what stands between the swap and the first
 * answer, so only what every request needs is done here: the manifest is read and split into its
 * routes' lines and its head checked, and catalog.json read (before the build may prune the tree)
 * unless the tree's catalog can be made from the current one's (a release's delta tree). Routes
 * are validated one by one when first asked for, catalog.json when the catalog is first used (at
 * 10,000 versions, validating all of them up front took 0.9 s). Anything invalid throws DataError
 * where it is used: that request answers 500 and is logged, and the others are answered. A catalog
 * written by older code is read with what it lacks made good (older-catalog.ts), said once as
 * a warning (default: plain lines on stderr).
 */
export async function openTree(dir: string, previous?: Tree, log: Log = STDERR_LINES): Promise<Tree> {
  const manifestFile = join(dir, 'manifest.json');
  const catalogFile = join(dir, 'catalog.json');
  const { head, routes } = await readManifest(manifestFile);
  const { delta } = head;
  const made = previous?.opened?.made();
  const reusable = previous?.opened?.reusable();
  const fromBase =
    delta?.versions && made && basename(previous!.dir) === delta.base
      ? { delta, versions: delta.versions, made, brands: previous!.brands, project: previous!.project }
      : undefined;
  const catalogText = fromBase ? '' : await readFile(catalogFile, 'utf8');
  const opened = new OpenedCatalog(() => {
    if (fromBase)
      return {
        catalog: catalogAfterDelta(fromBase.made, fromBase.delta, fromBase.versions),
        brands: fromBase.brands,
        project: fromBase.project,
      };
    const older = noOlderCatalogNotes();
    const parsed = parseTreeCatalog(parseJson(catalogText, catalogFile), catalogFile, reusable?.byId, older);
    const said = describeOlderCatalog(dir, older);
    if (said) log.warn(said);
    return parsed;
  }, reusable);
  const tree: Tree = {
    dir,
    get catalog() {
      return opened.get().catalog;
    },
    get brands() {
      return opened.get().brands;
    },
    get project() {
      return opened.get().project;
    },
    routes: delta ? await routesAfterDelta(dir, delta, previous, () => tree.catalog) : routes,
    source: head.source,
    opened,
  };
  return tree;
}

/**
 * A tree's catalog, made on first use, and what the next tree's may reuse of it: its validated
 * versions once made, or, when this tree is replaced before its catalog was made (releases in a
 * row), the catalog it would have reused. One catalog, never a chain of trees.
 */
class OpenedCatalog {
  readonly #get: () => TreeCatalog;
  #made: Catalog | undefined;
  #reusable: Catalog | undefined;

  constructor(make: () => TreeCatalog, reusable: Catalog | undefined) {
    this.#reusable = reusable;
    this.#get = lazily(() => {
      const opened = make();
      this.#made = opened.catalog;
      this.#reusable = undefined;
      return opened;
    });
  }

  get(): TreeCatalog {
    return this.#get();
  }

  /** The catalog, if made and valid. */
  made(): Catalog | undefined {
    return this.#made;
  }

  reusable(): Catalog | undefined {
    return this.#made ?? this.#reusable;
  }
}

/** A tree's catalog.json, validated: what the live routes answer from, and what the site is built from. */
export async function readTreeCatalog(dir: string): Promise<TreeCatalog> {
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
): TreeCatalog {
  const fits = CatalogFileHead.safeParse(raw);
  const head = fits.success ? fits.data : parseFile(CatalogFileHead, readOlderUsers(raw, older), file);
  const jarPath = (sha256: string) => jarFile(dirname(file), sha256);
  const versions = head.versions.map((version, index) => {
    const known =
      earlier && isJsonObject(version) && typeof version.id === 'string' ? earlier.get(version.id) : undefined;
    if (known && sameRecord(version as object, known)) return known;
    const parsed = CatalogVersion.safeParse(version);
    if (parsed.success) return parsed.data;
    const made = readOlderVersion(version, jarPath, older);
    if (made) return made;
    const issues = parsed.error.issues.map((issue) => ({ ...issue, path: ['versions', index, ...issue.path] }));
    throw new DataError(`${file}: ${describeIssues(issues)}`);
  });
  return { catalog: createCatalog(versions, head.users), brands: brandMap(head.brands), project: head.project };
}

/**
 * Same keys, same values; arrays compared item by item, and objects (a withdrawal, a Minecraft
 * range) key by key: a version's fields nest no deeper than an array of flat objects.
 */
function sameRecord(raw: object, known: object, depth = 0): boolean {
  const keys = Object.keys(raw);
  if (keys.length !== Object.keys(known).length) return false;
  return keys.every((key) =>
    sameValue((raw as Record<string, unknown>)[key], (known as Record<string, unknown>)[key], depth),
  );
}

function sameValue(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (depth >= 2 || typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const items = b as unknown[];
    return a.length === items.length && a.every((item, i) => sameValue(item, items[i], depth + 1));
  }
  return sameRecord(a, b, depth + 1);
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
