import { H3, HTTPError, getRouterParam, type H3Event } from 'h3';
import type { AppContext } from '../context.ts';
import { CACHE_CONTROL, NOT_FOUND_HEADERS } from '../http/cache.ts';
import { notFound } from '../http/errors.ts';
import { sendDocument, sendJson } from '../http/json.ts';
import { MEDIA_TYPES } from '../http/media-types.ts';
import { validateQuery } from '../http/validate.ts';
import type { Catalog } from './catalog.ts';
import type { Channel } from './channels.ts';
import { releaseFeed } from './feed.ts';
import { sendJar } from './jar-answer.ts';
import { pickLatest } from './latest.ts';
import { presentVersion, presentVersionList } from './present.ts';
import {
  ChannelQuery,
  CurrentVersion,
  JavaVersion,
  ListQuery,
  PLUGIN_VERSION_ID,
  ServerSoftwareName,
  type CatalogVersion,
  type UpdateCheck,
} from './schema.ts';
import type { JavaVersion as JavaVersionNumber, ServerSoftware } from './software.ts';
import { checkForUpdate } from './update-check.ts';
import { resolveRoutes } from './resolve-routes.ts';
import { integrityRoutes } from './integrity-routes.ts';

/** SPEC 4.1-4.6, mounted at /api/plugin-versions, and the update check. */
export function versionRoutes(ctx: AppContext): H3 {
  const app = new H3();
  app.get('/', async (event) => {
    const { minecraft } = await validateQuery(event, ListQuery);
    return sendJson(event, presentVersionList(ctx.tree().catalog, minecraft), CACHE_CONTROL.versionList);
  });
  const latestMetadata = async (event: H3Event) => {
    const { catalog, version } = await findLatest(ctx, event);
    return sendJson(event, { version: presentVersion(catalog, version, false) }, CACHE_CONTROL.latest);
  };
  const latestDownload = async (event: H3Event) =>
    sendJar(ctx, event, (await findLatest(ctx, event)).version, CACHE_CONTROL.latest, true);
  app.get('/latest/:software', latestMetadata);
  app.get('/latest/:software/:java', latestMetadata);
  app.get('/download/latest/:software', latestDownload);
  app.get('/download/latest/:software/:java', latestDownload);
  app.get('/feed.atom', (event) => sendFeed(event, releaseFeed(ctx.tree().catalog, ctx.publicUrl)));
  app.get('/feed/:software.atom', (event) => {
    const software = ServerSoftwareName.safeParse(getRouterParam(event, 'software', { decode: true }) ?? '');
    if (!software.success)
      throw notFound(software.error.issues[0]?.message ?? 'Unknown server software', undefined, NOT_FOUND_HEADERS);
    return sendFeed(event, releaseFeed(ctx.tree().catalog, ctx.publicUrl, software.data));
  });
  app.get('/download/:id', (event) => {
    const id = getRouterParam(event, 'id', { decode: true }) ?? '';
    const version = PLUGIN_VERSION_ID.test(id) ? ctx.tree().catalog.byId.get(id) : undefined;
    if (!version) throw notFound(`No plugin version with id ${JSON.stringify(id)}`, undefined, NOT_FOUND_HEADERS);
    return sendJar(ctx, event, version, CACHE_CONTROL.versionFile, false);
  });
  resolveRoutes(app, ctx);
  // Sidecars (`/download/<id>.sha256`) and lookup by hash: their own routes, matched before `/download/:id`.
  app.mount('', integrityRoutes(ctx));
  app.get('/update-check/:software/:java/:current', async (event) => {
    const current = CurrentVersion.safeParse(getRouterParam(event, 'current', { decode: true }) ?? '');
    if (!current.success) throw new HTTPError({ status: 400, message: `current ${current.error.issues[0]!.message}` });
    const { catalog, version: latest, software, channel } = await findLatest(ctx, event);
    const { status, behind } = checkForUpdate(catalog.versions, {
      software,
      java: latest.javaVersion,
      channel,
      current: current.data,
      latest,
    });
    const answer: UpdateCheck = {
      status,
      current: current.data,
      latest: presentVersion(catalog, latest, false),
      behind,
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

/** The latest version a request names, by its route's `software` and `java` and its `?channel=` (400 naming the allowed values). */
async function findLatest(ctx: AppContext, event: H3Event): Promise<Latest> {
  const channel = (await validateQuery(event, ChannelQuery)).channel ?? 'release';
  const software = getRouterParam(event, 'software', { decode: true }) ?? '';
  return latestNamed(ctx, software, getRouterParam(event, 'java', { decode: true }), channel);
}

/**
 * The latest version of a software, and Java version when named, on a channel (the latest
 * endpoints and badges): an unknown software or Java version answers 404 naming what exists, then
 * SPEC's 404 when none matches.
 */
export function latestNamed(
  ctx: AppContext,
  rawSoftware: string,
  rawJava: string | undefined,
  channel: Channel,
): Latest {
  const software = ServerSoftwareName.safeParse(rawSoftware);
  if (!software.success)
    throw notFound(software.error.issues[0]?.message ?? 'Unknown server software', undefined, NOT_FOUND_HEADERS);
  const java = rawJava === undefined ? undefined : JavaVersion.safeParse(rawJava);
  if (java && !java.success)
    throw notFound(java.error.issues[0]?.message ?? 'Unknown Java version', undefined, NOT_FOUND_HEADERS);
  const { catalog } = ctx.tree();
  const version = pickLatest(catalog.latest, software.data, java?.data, channel);
  if (!version) {
    const name = java ? `${software.data} on Java ${java.data}` : software.data;
    const within = channel === 'release' ? '' : ` in the ${channel} channel`;
    throw notFound(`No plugin version found for ${name}${within}`, undefined, NOT_FOUND_HEADERS);
  }
  return { catalog, version, software: software.data, java: java?.data, channel };
}

const sendFeed = (event: H3Event, atom: string) =>
  sendDocument(event, atom, MEDIA_TYPES.atom, CACHE_CONTROL.versionList);
