import { basename, dirname, join } from 'node:path';
import { DataError } from '../data-files.ts';
import { sha256Hex } from '../helpers/digest.ts';
import { createCatalog, type Catalog } from '../versions/catalog.ts';
import type { CatalogVersion } from '../versions/schema.ts';
import { changeSets, isSitePath, readsChange, type AnswerChanges } from './answer-inputs.ts';
import { DELTA_VERSIONS_MAX, type ManifestHead, type TreeDelta } from './format.ts';
import { KeptRoutes, readManifest, type RouteLookup, type RouteTable } from './routes.ts';

/**
 * A release's delta tree, both sides: the head the build writes (deltaHead) and what the origin
 * makes of it (routesAfterDelta, catalogAfterDelta). A delta tree is a tree of the changed catalog
 * whose manifest names its base (the tree it changes) rather than copying the base's routes
 * (megabytes to read, hash and write at 1,000 versions): it serves the base's answers but those
 * that read the change (answer-inputs.ts), which the origins answer live from the catalog (the same
 * bytes as precomputed: the tree's parity test) until the next tree holds them precomputed.
 */

/** A delta tree's manifest head; `source` is the full tree's that will follow it. */
export function deltaHead(
  catalog: Catalog,
  change: { base: string; changes: AnswerChanges; site: boolean; source: string },
): ManifestHead {
  const { base, changes, site, source } = change;
  const delta = { base, changes, site, ...deltaCatalog(catalog, changes) };
  // Never the full tree's source: `--if-changed` builds after it.
  return { format: 1, source: sha256Hex(source, 'answers pending'), delta };
}

/** What an origin holding the base's catalog makes a delta tree's catalog from (TreeDelta): none when many records changed. */
function deltaCatalog(catalog: Catalog, changes: AnswerChanges): Pick<TreeDelta, 'versions' | 'users'> {
  if (changes.records.length > DELTA_VERSIONS_MAX) return {};
  const versions = changes.records.flatMap((id) => catalog.byId.get(id) ?? []);
  return changes.users ? { versions, users: [...catalog.users.values()] } : { versions };
}

/** A delta tree's catalog: its base's, with the changed records replaced by the head's versions. */
export function catalogAfterDelta(base: Catalog, delta: TreeDelta, versions: readonly CatalogVersion[]): Catalog {
  const changed = new Set(delta.changes.records);
  const kept = base.versions.filter((version) => !changed.has(version.id));
  return createCatalog([...kept, ...versions], delta.users ?? [...base.users.values()]);
}

/**
 * A delta tree's routes: its base's (the origin's current tree's when that is the base, else read
 * from the base's manifest) but those that read the release's changes.
 */
export async function routesAfterDelta(
  dir: string,
  delta: TreeDelta,
  previous: { dir: string; routes: RouteLookup } | undefined,
  catalog: () => Catalog,
): Promise<RouteLookup> {
  const routes =
    previous && basename(previous.dir) === delta.base ? previous.routes : await readBaseRoutes(dir, delta.base);
  const changes = changeSets(delta.changes);
  return new KeptRoutes(routes, (path) =>
    isSitePath(path) ? delta.site : !readsChange(path, changes, { status: () => routes.get(path)!.status, catalog }),
  );
}

/** The routes of the tree `base` beside `dir`, which must be a full tree. */
async function readBaseRoutes(dir: string, base: string): Promise<RouteTable> {
  const file = join(dirname(dir), base, 'manifest.json');
  const { head, routes } = await readManifest(file);
  if (head.delta) throw new DataError(`${file}: a base tree has a base`);
  return routes;
}
