import { H3, getRouterParam, type H3Event } from 'h3';
import type { ByteCache } from '../byte-cache.ts';
import type { ImageRenderer } from '../brands/render.ts';
import type { SampleStore } from '../charts/samples.ts';
import type { ServerStore } from '../charts/servers.ts';
import type { DownloadCounter } from '../downloads/counter.ts';
import { HOUR } from '../helpers/duration.ts';
import { sha256Hex } from '../helpers/digest.ts';
import { CACHE_CONTROL, NOT_FOUND_HEADERS, PUBLIC_HEADERS, SVG_SECURITY_POLICY } from '../http/cache.ts';
import { forbidden } from '../http/auth.ts';
import { notFound } from '../http/errors.ts';
import { sendJson } from '../http/json.ts';
import { sendRepresentation } from '../http/send.ts';
import { strongEtag } from '../http/etag.ts';
import { validateNamedParams, validateParams, validateQuery } from '../http/validate.ts';
import type { Catalog } from '../versions/catalog.ts';
import { requireLatest } from '../versions/require-latest.ts';
import { drawBadge, metric, scaledForPng } from './draw.ts';
import { BADGE_RULES } from './paths.ts';
import {
  BADGE_FORMATS,
  BadgeFormatName,
  BadgeQuery,
  LatestBadgePath,
  LatestBadgeQuery,
  PlayersBadgePath,
  type Badge,
  type BadgeFormat,
} from './schema.ts';

/** What badges read: the tree's catalog, the download total, servers and their samples, the clock, and sharp with the chart cache for PNGs. */
export type BadgeRouteDeps = {
  tree: () => { catalog: Catalog };
  downloads: Pick<DownloadCounter, 'total'>;
  servers: Pick<ServerStore, 'get'>;
  samples: Pick<SampleStore, 'range'>;
  now: () => number;
  chartCache: ByteCache;
  renderer: Pick<ImageRenderer, 'rasterise'>;
};

/** A rendered PNG is kept as long as its badge may be cached. */
const PNG_TTL_SECONDS = 300;

/**
 * Issue 17: badges in shields.io's look, drawn live from the catalog, the download counts and the
 * player samples; each as SVG, PNG and shields.io endpoint JSON.
 */
export function badgeRoutes(ctx: BadgeRouteDeps): H3 {
  const app = new H3();
  const latest = async (event: H3Event) => {
    const format = formatOf(event);
    const { style, channel = 'release' } = await validateQuery(event, LatestBadgeQuery);
    const { serverSoftware: software, javaVersion: java } = await validateNamedParams(
      event,
      LatestBadgePath,
      NOT_FOUND_HEADERS,
    );
    const version = requireLatest(ctx.tree().catalog, software, java, channel);
    const label = java === undefined ? software : `${software} Java ${java}`;
    const versionChannel = version.channel ?? 'release';
    const color = versionChannel === 'release' ? 'blue' : versionChannel === 'beta' ? 'orange' : 'red';
    return sendBadge(ctx, event, { label, message: `v${version.pluginVersion}`, color }, format, style);
  };
  app.get(BADGE_RULES.latest.pattern, latest);
  app.get(BADGE_RULES.latestOnJava.pattern, latest);

  app.get(BADGE_RULES.downloads.pattern, async (event) => {
    const format = formatOf(event);
    const { style } = await validateQuery(event, BadgeQuery);
    // Kept a few seconds, closed days summed once: a badge request costs no parse of the history.
    const total = await ctx.downloads.total();
    return sendBadge(ctx, event, { label: 'downloads', message: metric(total), color: 'brightgreen' }, format, style);
  });

  app.get(BADGE_RULES.players.pattern, async (event) => {
    const format = formatOf(event);
    const { style } = await validateQuery(event, BadgeQuery);
    const { id } = await validateParams(event, PlayersBadgePath);
    const server = await ctx.servers.get(id);
    if (!server) throw notFound(`No server with id ${id}`);
    if (server.private) throw forbidden('This server is private: its players have no public badge');
    const players = await playersNow(ctx, server.id);
    const badge: Badge =
      players === null
        ? { label: 'players', message: 'no recent data', color: 'lightgrey' }
        : { label: 'players', message: `${metric(players)} online`, color: players > 0 ? 'brightgreen' : 'lightgrey' };
    return sendBadge(ctx, event, badge, format, style);
  });
  return app;
}

/** The format the path ends in; 404 naming the three for another. */
function formatOf(event: H3Event): BadgeFormat {
  const format = BadgeFormatName.safeParse(getRouterParam(event, 'format'));
  if (!format.success)
    throw notFound(
      `No badge format ${JSON.stringify(getRouterParam(event, 'format'))}; one of ${BADGE_FORMATS.join(', ')}`,
    );
  return format.data;
}

/**
 * Players online now: the mean of the current UTC hour's samples, or of the previous hour's until
 * this hour has one; null when neither has (the server stopped reporting).
 */
async function playersNow(ctx: Pick<BadgeRouteDeps, 'samples' | 'now'>, serverId: string): Promise<number | null> {
  const now = ctx.now();
  const buckets = await ctx.samples.range(serverId, now - HOUR, now);
  const since = Math.floor(now / HOUR) * HOUR - HOUR;
  const last = buckets.filter((bucket) => bucket.hour >= since && bucket.count > 0).at(-1);
  return last ? Math.round(last.sum / last.count) : null;
}

async function sendBadge(
  ctx: BadgeRouteDeps,
  event: H3Event,
  badge: Badge,
  format: BadgeFormat,
  style: Parameters<typeof drawBadge>[1],
) {
  if (format === 'json') return sendJson(event, { schemaVersion: 1, ...badge }, CACHE_CONTROL.badge);
  const svg = await drawBadge(badge, style);
  const bytes = format === 'svg' ? new TextEncoder().encode(svg) : await pngOf(ctx, svg);
  return sendRepresentation(event, {
    status: 200,
    headers: {
      'content-type': format === 'svg' ? 'image/svg+xml' : 'image/png',
      'cache-control': CACHE_CONTROL.badge,
      etag: strongEtag(bytes),
      ...PUBLIC_HEADERS,
      ...(format === 'svg' ? { 'content-security-policy': SVG_SECURITY_POLICY } : {}),
    },
    size: bytes.length,
    body: bytes,
  });
}

/** The badge rasterised by sharp (through the renderer's bounded queue), kept in the chart cache. */
async function pngOf(ctx: Pick<BadgeRouteDeps, 'chartCache' | 'renderer'>, svg: string): Promise<Uint8Array> {
  const key = sha256Hex('badge-png\n', svg);
  const cached = await ctx.chartCache.get(key);
  if (cached) return cached;
  const png = await ctx.renderer.rasterise(scaledForPng(svg));
  await ctx.chartCache.set(key, png, PNG_TTL_SECONDS);
  return png;
}
