import { H3, getRouterParam, type H3Event } from 'h3';
import { CACHE_CONTROL, NOT_FOUND_HEADERS } from '../http/cache.ts';
import { notFound } from '../http/errors.ts';
import { noEndpointAt } from '../http/endpoints.ts';
import { sendDocument, sendJson } from '../http/json.ts';
import { MEDIA_TYPES } from '../http/media-types.ts';
import { validateNamedParams, validateParams, validateQuery } from '../http/validate.ts';
import type { Catalog } from './catalog.ts';
import type { Channel } from './channels.ts';
import { releaseFeed, type FeedPages } from './feed.ts';
import { sendJar, type JarSource } from './jar-answer.ts';
import { withdrawalHeaders } from './withdrawal-headers.ts';
import { presentVersion, presentVersionList } from './present.ts';
import { requireLatest } from './require-latest.ts';
import {
  ChannelQuery,
  ListQuery,
  PLUGIN_VERSION_ID,
  SoftwarePath,
  UpdateCheckPath,
  type CatalogVersion,
  type UpdateCheck,
} from './schema.ts';
import type { ServerSoftware } from './software.ts';
import type { JavaVersion as JavaVersionNumber } from './java.ts';
import { checkForUpdate, newerElsewhere, withdrawalOf } from './update-check.ts';
import { VERSION_RULES, VERSIONS_ROOT } from './paths.ts';
import { findResolved, resolutionNotes, resolveRoutes } from './resolve-routes.ts';
import type { ProjectRecord } from '../project/schema.ts';
import { integrityRoutes } from './integrity-routes.ts';
import { updaterRoutes } from './updater-routes.ts';

/**
 * What the version routes read: the tree's catalog and JARs, the public URL and the site's pages of
 * the feeds' links, and the download counter.
 */
export type VersionRouteDeps = JarSource & {
  tree: () => { catalog: Catalog; readonly project?: ProjectRecord | undefined };
  publicUrl: string;
  feedPages: FeedPages;
};

/** SPEC 4.1-4.6, mounted at /api/plugin-versions, and the update check. */
export function versionRoutes(ctx: VersionRouteDeps): H3 {
  const app = new H3();
  app.get(VERSION_RULES.list.under(VERSIONS_ROOT), async (event) => {
    const { minecraft } = await validateQuery(event, ListQuery);
    return sendJson(event, presentVersionList(ctx.tree().catalog, minecraft), CACHE_CONTROL.versionList);
  });
  const latestMetadata = async (event: H3Event) => {
    const { catalog, version } = await findLatest(ctx, event);
    return sendJson(event, { version: presentVersion(catalog, version, false) }, CACHE_CONTROL.latest);
  };
  const latestDownload = async (event: H3Event) =>
    sendJar(ctx, event, (await findLatest(ctx, event)).version, CACHE_CONTROL.latest, true);
  app.get(VERSION_RULES.latest.under(VERSIONS_ROOT), latestMetadata);
  app.get(VERSION_RULES.latestOnJava.under(VERSIONS_ROOT), latestMetadata);
  app.get(VERSION_RULES.downloadLatest.under(VERSIONS_ROOT), latestDownload);
  app.get(VERSION_RULES.downloadLatestOnJava.under(VERSIONS_ROOT), latestDownload);
  app.get(VERSION_RULES.feed.under(VERSIONS_ROOT), (event) =>
    sendFeed(event, releaseFeed(ctx.tree().catalog, ctx.publicUrl, ctx.feedPages, undefined, ctx.tree().project)),
  );
  app.get(VERSION_RULES.softwareFeed.under(VERSIONS_ROOT), async (event) => {
    const { software } = await validateNamedParams(event, SoftwarePath, NOT_FOUND_HEADERS);
    return sendFeed(event, releaseFeed(ctx.tree().catalog, ctx.publicUrl, ctx.feedPages, software, ctx.tree().project));
  });
  app.get(VERSION_RULES.download.under(VERSIONS_ROOT), (event) => {
    const id = getRouterParam(event, 'id', { decode: true }) ?? '';
    const { catalog } = ctx.tree();
    const version = PLUGIN_VERSION_ID.test(id) ? catalog.byId.get(id) : undefined;
    if (!version) throw notFound(`No plugin version with id ${JSON.stringify(id)}`, undefined, NOT_FOUND_HEADERS);
    // Issue 29: servers pin versions, so a withdrawn one stays downloadable, saying so; not
    // immutable then, since its successor moves with later releases and a restore takes it back.
    const cacheControl = version.withdrawn ? CACHE_CONTROL.versionObject : CACHE_CONTROL.versionFile;
    return sendJar(ctx, event, version, cacheControl, false, withdrawalHeaders(catalog, version));
  });
  app.get(VERSION_RULES.version.under(VERSIONS_ROOT), (event) => {
    const { catalog } = ctx.tree();
    const version = requireVersion(catalog, getRouterParam(event, 'id', { decode: true }) ?? '', event.url.pathname);
    return sendJson(event, { version: presentVersion(catalog, version, true) }, CACHE_CONTROL.versionObject);
  });
  resolveRoutes(app, ctx);
  // Sidecars (`/download/<id>.sha256`) and lookup by hash: their own routes, matched before `/download/:id`.
  app.mount('', integrityRoutes(ctx));
  // Issue 31: `latest/<software>.txt` and the Modrinth-shaped lookup by hash.
  app.mount('', updaterRoutes(ctx));
  app.get(VERSION_RULES.updateCheck.under(VERSIONS_ROOT), async (event) => {
    const { current } = await validateParams(event, UpdateCheckPath);
    // Issue 31: through resolve's chain, Java as a minimum, `?minecraft=` and `?channel=`.
    const { catalog, resolved, server, query } = await findResolved(ctx, event);
    const question = { ...query, current, latest: resolved.version };
    const { status, behind } = checkForUpdate(catalog.versions, question);
    const shown = presentVersion(catalog, resolved.version, false);
    const withdrawn = withdrawalOf(catalog.versions, question);
    const newer = newerElsewhere(catalog.versions, question);
    // Issue 29: a server running a withdrawn version is told why and where to go; absent otherwise.
    const answer: UpdateCheck = {
      status,
      current,
      latest: shown,
      behind,
      ...(withdrawn && { withdrawn, moveTo: shown }),
      ...resolutionNotes(resolved, server),
      ...(newer.length > 0 && { newerElsewhere: newer }),
    };
    return sendJson(event, answer, CACHE_CONTROL.latest);
  });
  return app;
}

/** The catalog the answer is read from (one tree for the whole answer, even across a swap) and what it picked. */
type Latest = {
  catalog: Catalog;
  version: CatalogVersion;
  software: ServerSoftware;
  java: JavaVersionNumber | undefined;
  channel: Channel;
};

/** The latest version a request names: its `?channel=` (400 naming the allowed values), then its route's `software` and `java` (404 naming what exists). */
async function findLatest(ctx: Pick<VersionRouteDeps, 'tree'>, event: H3Event): Promise<Latest> {
  const channel = (await validateQuery(event, ChannelQuery)).channel ?? 'release';
  const { software, java } = await validateNamedParams(event, SoftwarePath, NOT_FOUND_HEADERS);
  const { catalog } = ctx.tree();
  return { catalog, version: requireLatest(catalog, software, java, channel), software, java, channel };
}

/**
 * The version an id names, else a 404 naming the id. This route takes every single segment under
 * the root: one of another shape (`latest` alone, a typo) is no endpoint, answered as every unknown
 * path is.
 */
function requireVersion(catalog: Catalog, id: string, path: string): CatalogVersion {
  if (!PLUGIN_VERSION_ID.test(id)) throw notFound(noEndpointAt(path), undefined, NOT_FOUND_HEADERS);
  const version = catalog.byId.get(id);
  if (version) return version;
  throw notFound(`No plugin version with id ${JSON.stringify(id)}`, undefined, NOT_FOUND_HEADERS);
}

const sendFeed = (event: H3Event, atom: string) =>
  sendDocument(event, atom, MEDIA_TYPES.atom, CACHE_CONTROL.versionList);
