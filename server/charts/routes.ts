import { H3, HTTPError, type H3Event } from 'h3';
import type { ByteCache } from '../byte-cache.ts';
import { bearerToken, forbidden, secretMatches, unauthorized } from '../http/auth.ts';
import { CACHE_CONTROL, PRIVATE_HEADERS, PUBLIC_HEADERS, SVG_SECURITY_POLICY } from '../http/cache.ts';
import { requestClient } from '../http/client-address.ts';
import { chargeKey, chargeLimit, type RateLimiter } from '../http/rate-limit.ts';
import { throttledLog } from '../helpers/throttled-log.ts';
import { notFound } from '../http/errors.ts';
import { sendRepresentation } from '../http/send.ts';
import { strongEtag } from '../http/etag.ts';
import { validateParams, validateQuery } from '../http/validate.ts';
import { readJsonBody, readValidatedJsonBody } from '../http/json.ts';
import { aggregate, type Series } from './aggregate.ts';
import { chartCsv, chartData } from './data.ts';
import { drawPlayerChart } from './draw.ts';
import { EXAMPLE_NOW, exampleBuckets } from './example.ts';
import { idempotencyKeyOf, type IdempotencyStore } from './idempotency.ts';
import { samplesFromBody } from './ingest.ts';
import { ChartUrlBody, PlayersChartQuery, chartSignatureMatches, mintChartUrl } from './signed-url.ts';
import { MEDIA_TYPES } from '../http/media-types.ts';
import { ChartQuery, ServerPath } from './schema.ts';
import { CHART_RULES } from './paths.ts';
import type { Sample, SampleStore } from './samples.ts';
import type { Outcome } from './idempotency/contract.ts';
import type { ServerRecord, ServerStore } from './servers.ts';
import type { UserTokenStore } from '../users.ts';
import { chartCacheKey } from './server-state.ts';
import { DAY } from '../helpers/duration.ts';

/** SPEC 8: charts are cached for 5 minutes. */
const CHART_TTL_SECONDS = 300;

/** What the chart routes read: the stores of servers, samples, ingestion keys and owners' tokens, and what access, signing and rendering need. */
export type ChartRouteDeps = {
  servers: Pick<ServerStore, 'get'>;
  samples: Pick<SampleStore, 'add' | 'range'>;
  idempotency: Pick<IdempotencyStore, 'once' | 'maxKeysPerDay'>;
  /** INGEST_RATE_LIMIT: ingestion requests per server key; null: not limited. */
  ingestLimiter: RateLimiter | null;
  tokens: Pick<UserTokenStore, 'authenticate'>;
  chartCache: ByteCache;
  now: () => number;
  /** PRIVATE_CHART_IPS: may a private chart be read from this address? */
  privateChartsFrom: (address: string | undefined) => boolean;
  /** TRUST_PROXY: is this peer a proxy whose X-Forwarded-For is believed? */
  trustProxy: (address: string) => boolean;
  /** PUBLIC_URL: the base of minted chart URLs. */
  publicUrl: string;
  /** The keys chart URLs are signed with (the first signs, every one is accepted). */
  chartUrlKeys: () => Promise<string[]>;
  /** An SVG as PNG: PNG charts share the brand images' sharp queue. */
  renderer: { rasterise: (svg: string) => Promise<Uint8Array> };
};

/** SPEC 4.9 and 4.10, and player-count ingestion (DESIGN: POST /api/servers/:id/stats). */
export function chartRoutes(ctx: ChartRouteDeps): H3 {
  const app = new H3();
  app.get(CHART_RULES.example.pattern, (event) => answerExampleChart(ctx, event));
  app.get(CHART_RULES.players.pattern, (event) => answerPlayersChart(ctx, event));
  const warnDiskFull = throttledLog((line) => console.error(line), ctx.now);
  app.post(CHART_RULES.stats.pattern, (event) => ingestPlayerCounts(ctx, warnDiskFull, event));
  app.post(CHART_RULES.chartUrls.pattern, (event) => mintChartUrlOfServer(ctx, event));
  return app;
}

/** The example chart: made-up player counts at a fixed time, for the docs and for trying parameters. */
async function answerExampleChart(ctx: ChartRouteDeps, event: H3Event) {
  const query = await validateQuery(event, ChartQuery);
  const series = aggregate(exampleBuckets(query.days, EXAMPLE_NOW), { days: query.days, now: EXAMPLE_NOW });
  return sendChart(event, await chartBytes(ctx, series, query), query.format, CACHE_CONTROL.chart);
}

/** A server's player chart: access checked (signed URL, owner's token, or public), then cached or rendered. */
async function answerPlayersChart(ctx: ChartRouteDeps, event: H3Event) {
  const { exp, sig, ...query } = await validateQuery(event, PlayersChartQuery);
  const server = await findServer(ctx, event);
  const signed = exp !== undefined || sig !== undefined;
  if (signed) await requireSignature(ctx, event, server, query, exp, sig);
  else if (server.private) await requireOwner(ctx, event, server);
  // SPEC 8: an owner's private chart is not rate limited; every other chart is, cached or not.
  if (!server.private) await chargeLimit(event);
  const cacheControl = chartCacheControl(ctx, server, signed ? exp! : undefined);
  // Keyed by server and parameters, looked up only after the access check: a private chart is
  // never handed from the cache to anyone but its owner.
  const key = chartCacheKey(server.id, query);
  const cached = await ctx.chartCache.get(key);
  if (cached) {
    event.context.answeredFrom = 'cache';
    return sendChart(event, cached, query.format, cacheControl);
  }
  event.context.answeredFrom = 'rendered';
  const now = ctx.now();
  const buckets = await ctx.samples.range(server.id, now - (query.days + 1) * DAY, now);
  const bytes = await chartBytes(ctx, aggregate(buckets, { days: query.days, now }), query);
  await ctx.chartCache.set(key, bytes, CHART_TTL_SECONDS);
  return sendChart(event, bytes, query.format, cacheControl);
}

/**
 * A signed URL (`signedUntil`, its checked exp) is a credential: its answers are for the browser
 * that holds it, never a shared cache, and for no longer than it is valid.
 */
function chartCacheControl(ctx: ChartRouteDeps, server: ServerRecord, signedUntil: number | undefined): string {
  if (signedUntil !== undefined)
    return `private, max-age=${Math.min(CHART_TTL_SECONDS, signedUntil - Math.floor(ctx.now() / 1000))}`;
  return server.private ? CACHE_CONTROL.privateChart : CACHE_CONTROL.chart;
}

/** POST /api/servers/:id/stats: the server's key checked and charged, then its samples stored (once per Idempotency-Key). */
async function ingestPlayerCounts(ctx: ChartRouteDeps, warnDiskFull: (line: string) => void, event: H3Event) {
  // Read fresh: a rotated key or a removed server is refused at once on every origin.
  const server = await findServer(ctx, event, { fresh: true });
  const key = bearerToken(event);
  if (!key) throw unauthorized("Send the server's ingest key as Authorization: Bearer <key>");
  if (!secretMatches(server.ingestKeyHash, key)) throw unauthorized('Wrong ingest key for this server');
  // Counted per server key once the key is checked: only its holder can spend its budget.
  if (ctx.ingestLimiter)
    event.context.rateLimit = {
      headers: await chargeKey(ctx.ingestLimiter, server.id, 'ingest', "Ingestion limit of this server's key"),
    };
  const answered = { ...PRIVATE_HEADERS, ...event.context.rateLimit?.headers };
  const idempotencyKey = idempotencyKeyOf(event);
  const body = await readJsonBody(event, '{"players": n} or {"samples": [...]}');
  const result = samplesFromBody(body, ctx.now());
  if ('error' in result) throw new HTTPError({ status: 400, message: result.error });
  const store = () => storeSamples(ctx, warnDiskFull, server.id, result.samples);
  if (idempotencyKey === null) await store();
  else {
    const outcome = await ctx.idempotency.once(server.id, idempotencyKey, JSON.stringify(body), store, ctx.now());
    if (outcome === 'replayed')
      return new Response(null, { status: 204, headers: { ...answered, 'idempotent-replayed': 'true' } });
    if (outcome !== 'stored') throw idempotencyRefusal(ctx, event, outcome);
  }
  return new Response(null, { status: 204, headers: answered });
}

/** Stores a server's samples; a full disk answers 503 (and is said once a minute) rather than 500. */
function storeSamples(
  ctx: ChartRouteDeps,
  warnDiskFull: (line: string) => void,
  serverId: string,
  samples: readonly Sample[],
): Promise<void> {
  return ctx.samples.add(serverId, samples).catch((error: unknown) => {
    if (!isDiskFull(error)) throw error;
    warnDiskFull(`[storage] no space left for player counts, ingestion answers 503 (said once a minute): ${error}`);
    throw new HTTPError({
      status: 503,
      message: 'The store has no space left; nothing was stored: retry later',
      headers: { 'retry-after': String(DISK_FULL_RETRY_SECONDS) },
    });
  });
}

/** Why a keyed ingestion was not stored now: the day's keys are used up, the key came with another body, or it is still being stored. */
function idempotencyRefusal(
  ctx: ChartRouteDeps,
  event: H3Event,
  outcome: Exclude<Outcome, 'stored' | 'replayed'>,
): HTTPError {
  switch (outcome) {
    case 'capped':
      return new HTTPError({
        status: 429,
        message: `Idempotency-Key limit reached: a server stores at most ${ctx.idempotency.maxKeysPerDay} new keys per UTC day; retry after midnight UTC`,
        headers: { ...event.context.rateLimit?.headers, 'retry-after': String(secondsToMidnight(ctx.now())) },
      });
    case 'conflict':
      return new HTTPError({
        status: 422,
        message: 'Idempotency-Key was used with another body in the last 24 hours; send new samples with a new key',
      });
    case 'in-progress':
      return new HTTPError({
        status: 409,
        message: 'A request with this Idempotency-Key is still being stored; retry in a moment',
        headers: { 'retry-after': '1' },
      });
  }
}

/** POST /api/servers/:id/chart-urls: the owner mints a signed URL of its server's chart. */
async function mintChartUrlOfServer(ctx: ChartRouteDeps, event: H3Event) {
  const server = await findServer(ctx, event);
  const token = bearerToken(event);
  if (!token) throw unauthorized("Send the server owner's token as Authorization: Bearer <token>");
  if ((await ctx.tokens.authenticate(token)) !== server.owner)
    throw forbidden("Only the server's owner mints URLs of its chart");
  const body = await readValidatedJsonBody(
    event,
    ChartUrlBody,
    '{"days": 7, "expires": "30d"}, or {} for the defaults',
  );
  const minted = mintChartUrl({
    baseUrl: ctx.publicUrl,
    keys: await ctx.chartUrlKeys(),
    serverId: server.id,
    body,
    now: ctx.now(),
  });
  // A credential, for its owner only: no CORS, never cached.
  return new Response(JSON.stringify(minted), {
    headers: { 'content-type': MEDIA_TYPES.json, 'cache-control': 'no-store', ...PRIVATE_HEADERS },
  });
}

async function findServer(ctx: ChartRouteDeps, event: H3Event, read?: { fresh: boolean }): Promise<ServerRecord> {
  const { id } = await validateParams(event, ServerPath);
  const server = await ctx.servers.get(id, read);
  // A server added later answers within a minute (issue 17: no chart error is kept longer).
  if (!server) throw notFound(`No server with id ${id}`, undefined, { 'cache-control': CACHE_CONTROL.notFound });
  return server;
}

/** SPEC 5.3: a private chart answers only its owner, and only from PRIVATE_CHART_IPS when set. */
async function requireOwner(ctx: ChartRouteDeps, event: H3Event, server: ServerRecord): Promise<void> {
  const token = bearerToken(event);
  if (!token) throw forbidden("This chart is private: send its owner's token as Authorization: Bearer <token>");
  if ((await ctx.tokens.authenticate(token)) !== server.owner) throw forbidden('This chart is private to its owner');
  if (!ctx.privateChartsFrom(requestClient(event, ctx.trustProxy).address))
    throw forbidden('Private charts cannot be read from this address');
}

/**
 * A signed chart URL (exp and sig, minted by the owner) stands in for the owner's token: its
 * signature must cover this server and these parameters, it must not have expired, and a private
 * chart is still read only from PRIVATE_CHART_IPS when set.
 */
async function requireSignature(
  ctx: ChartRouteDeps,
  event: H3Event,
  server: ServerRecord,
  query: ChartQuery,
  exp: number | undefined,
  sig: string | undefined,
): Promise<void> {
  if (exp === undefined || sig === undefined)
    throw new HTTPError({
      status: 400,
      message: `${exp === undefined ? 'exp' : 'sig'} is missing: a signed chart URL carries both exp and sig`,
    });
  if (!chartSignatureMatches(await ctx.chartUrlKeys(), server.id, query, exp, sig))
    throw forbidden('sig does not sign this chart with these parameters: mint a new URL for other parameters');
  if (exp * 1000 <= ctx.now())
    throw forbidden(`This chart URL expired at ${new Date(exp * 1000).toISOString()}: mint a new one`);
  if (server.private && !ctx.privateChartsFrom(requestClient(event, ctx.trustProxy).address))
    throw forbidden('Private charts cannot be read from this address');
}

/** A full disk asks the operator to free space: clients retry no sooner than this. */
const DISK_FULL_RETRY_SECONDS = 60;

/** The store's disk (or quota) is full: ENOSPC or EDQUOT, on the error or one of its causes (a lock's). */
function isDiskFull(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause)
    if (['ENOSPC', 'EDQUOT'].includes(String((cause as NodeJS.ErrnoException).code))) return true;
  return false;
}

/** Seconds until the next UTC midnight (at least 1): when a server's day of Idempotency-Keys starts again. */
function secondsToMidnight(now: number): number {
  return Math.max(1, Math.ceil((DAY - (now % DAY)) / 1000));
}

/** The series drawn, or as data. PNG charts share the image renderer's sharp queue with brand images. */
async function chartBytes(ctx: ChartRouteDeps, series: Series, query: ChartQuery): Promise<Uint8Array> {
  const text = (value: string) => new TextEncoder().encode(value);
  switch (query.format) {
    case 'svg':
      return text(drawPlayerChart(series, query));
    case 'png':
      return ctx.renderer.rasterise(drawPlayerChart(series, query));
    case 'json':
      return text(JSON.stringify(chartData(series)));
    case 'csv':
      return text(chartCsv(series));
  }
}

const CONTENT_TYPES: Record<ChartQuery['format'], string> = {
  svg: 'image/svg+xml',
  png: 'image/png',
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

/** An SVG chart, the same chart rasterised (format=png) for places that cannot show SVG, or its series (json, csv). */
function sendChart(event: H3Event, bytes: Uint8Array, format: ChartQuery['format'], cacheControl: string) {
  const headers: Record<string, string> = {
    'content-type': CONTENT_TYPES[format],
    'cache-control': cacheControl,
    etag: strongEtag(bytes),
    ...(cacheControl.startsWith('private') ? PRIVATE_HEADERS : PUBLIC_HEADERS),
    ...(format === 'svg' ? { 'content-security-policy': SVG_SECURITY_POLICY } : {}),
  };
  return sendRepresentation(event, { status: 200, headers, size: bytes.length, body: bytes });
}
