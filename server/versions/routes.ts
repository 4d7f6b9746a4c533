import { H3, getRouterParam, type H3Event } from 'h3';
import type { AppContext } from '../context.ts';
import { CACHE_CONTROL, PUBLIC_HEADERS } from '../http/cache.ts';
import { notFound } from '../http/errors.ts';
import { sendJson } from '../http/json.ts';
import { sendRepresentation } from '../http/send.ts';
import { jarFile } from '../tree.ts';
import { pickLatest } from './latest.ts';
import { presentVersion, presentVersionList } from './present.ts';
import { JavaVersion, PLUGIN_VERSION_ID, ServerSoftwareName, type PluginVersionRecord } from './schema.ts';
import { dispositionHeader } from '../http/disposition.ts';

const NOT_FOUND_HEADERS = { 'cache-control': CACHE_CONTROL.notFound };

/** SPEC 4.1-4.6, mounted at /api/plugin-versions. */
export function versionRoutes(ctx: AppContext): H3 {
  const app = new H3();
  app.get('/', (event) => sendJson(event, presentVersionList(ctx.tree().catalog), CACHE_CONTROL.versionList));
  const latestMetadata = (event: H3Event) => {
    const { catalog } = ctx.tree();
    return sendJson(event, { version: presentVersion(catalog, findLatest(ctx, event), false) }, CACHE_CONTROL.latest);
  };
  const latestDownload = (event: H3Event) => sendJar(ctx, event, findLatest(ctx, event), CACHE_CONTROL.latest);
  app.get('/latest/:software', latestMetadata);
  app.get('/latest/:software/:java', latestMetadata);
  app.get('/download/latest/:software', latestDownload);
  app.get('/download/latest/:software/:java', latestDownload);
  app.get('/download/:id', (event) => {
    const id = getRouterParam(event, 'id', { decode: true }) ?? '';
    const version = PLUGIN_VERSION_ID.test(id) ? ctx.tree().catalog.byId.get(id) : undefined;
    if (!version) throw notFound(`No plugin version with id ${JSON.stringify(id)}`, undefined, NOT_FOUND_HEADERS);
    return sendJar(ctx, event, version, CACHE_CONTROL.versionFile);
  });
  return app;
}

/** Unknown software or Java version: 404 naming what exists; known but no match: SPEC's message. */
function findLatest(ctx: AppContext, event: H3Event): PluginVersionRecord {
  const rawSoftware = getRouterParam(event, 'software', { decode: true }) ?? '';
  const rawJava = getRouterParam(event, 'java', { decode: true });
  const software = ServerSoftwareName.safeParse(rawSoftware);
  if (!software.success)
    throw notFound(software.error.issues[0]?.message ?? 'Unknown server software', undefined, NOT_FOUND_HEADERS);
  const java = rawJava === undefined ? undefined : JavaVersion.safeParse(rawJava);
  if (java && !java.success)
    throw notFound(java.error.issues[0]?.message ?? 'Unknown Java version', undefined, NOT_FOUND_HEADERS);
  const version = pickLatest(ctx.tree().catalog.latest, software.data, java?.data);
  if (!version) {
    const name = java ? `${software.data} on Java ${java.data}` : software.data;
    throw notFound(`No plugin version found for ${name}`, undefined, NOT_FOUND_HEADERS);
  }
  return version;
}

function sendJar(ctx: AppContext, event: H3Event, version: PluginVersionRecord, cacheControl: string) {
  return sendRepresentation(event, {
    status: 200,
    headers: {
      'content-type': 'application/java-archive',
      'content-disposition': dispositionHeader('attachment', version.fileName),
      'cache-control': cacheControl,
      etag: `"${version.sha256}"`,
      'accept-ranges': 'bytes',
      ...PUBLIC_HEADERS,
    },
    size: version.fileSize,
    body: { path: jarFile(ctx.tree().dir, version.sha256) },
  });
}
