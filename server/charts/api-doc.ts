import { z } from 'zod';
import type { ZodOpenApiPathsObject, ZodOpenApiResponseObject } from 'zod-openapi';
import {
  COMPRESSIBLE_HEADERS,
  INTERNAL_ERROR,
  LIMITED_ANSWERS,
  NOT_MODIFIED,
  RATE_LIMIT_HEADERS,
  STORAGE_UNAVAILABLE,
  binaryContent,
  errorAnswer,
} from '../http/api-doc.ts';
import { ChartData } from './data.ts';
import { ChartQuery, PlayersBody, SamplesBody, ServerPath } from './schema.ts';
import { ChartUrlAnswer, ChartUrlBody, PlayersChartQuery } from './signed-url.ts';

const CHART: ZodOpenApiResponseObject = {
  description:
    'The chart: SVG, PNG with format=png; or the series it draws with format=json or format=csv (`time,peak,average`, a row per period, empty values for a gap)',
  headers: { ...COMPRESSIBLE_HEADERS, ...RATE_LIMIT_HEADERS },
  content: {
    ...binaryContent(['image/svg+xml', 'image/png']),
    'application/json': { schema: ChartData },
    'text/csv': { schema: { type: 'string' } },
  },
};
const BAD_QUERY = errorAnswer(
  'days, width, height, theme, background or format outside their values (the error names each), or an id that is not a UUID',
);

/** SPEC 4.9, 4.10 and player-count ingestion (DESIGN). */
export const CHART_PATHS: ZodOpenApiPathsObject = {
  '/api/charts/example': {
    get: {
      tags: ['player charts'],
      summary: 'A chart of generated data, the same bytes for the same query (SPEC 4.10)',
      requestParams: { query: ChartQuery },
      responses: { '200': CHART, '304': NOT_MODIFIED, '400': BAD_QUERY, ...LIMITED_ANSWERS },
    },
  },
  '/api/servers/{id}/chart/players': {
    get: {
      tags: ['player charts'],
      summary: 'Peak and average players of a server (SPEC 4.9)',
      description:
        "Public servers: anyone, rate limited. Private servers: only the owner's token, only from PRIVATE_CHART_IPS when set, not rate limited, `Cache-Control: private`. " +
        'A signed URL (exp and sig, from POST /api/servers/{id}/chart-urls or `depot chart-url`) answers without a token until exp, with `Cache-Control: private`.',
      security: [{}, { ownerToken: [] }],
      requestParams: { path: ServerPath, query: PlayersChartQuery },
      responses: {
        '200': CHART,
        '304': NOT_MODIFIED,
        '400': BAD_QUERY,
        '403': errorAnswer(
          "A private chart without its owner's token, or from an address outside PRIVATE_CHART_IPS; a signed URL whose sig does not cover this server and these parameters, or past its exp",
        ),
        '404': errorAnswer('No server with this id'),
        ...LIMITED_ANSWERS,
        '503': STORAGE_UNAVAILABLE,
      },
    },
  },
  '/api/servers/{id}/chart-urls': {
    post: {
      tags: ['player charts'],
      summary: "Mint a signed, expiring URL of the server's chart, to embed without a token",
      description:
        'The URL carries the chart parameters, `exp` and `sig` (HMAC-SHA256 over the path and the canonical parameters, by the newest of CHART_URL_KEYS, or without them by a key generated once into the state store). Any change to them answers 403. Not rate limited.',
      security: [{ ownerToken: [] }],
      requestParams: { path: ServerPath },
      requestBody: { required: true, content: { 'application/json': { schema: ChartUrlBody } } },
      responses: {
        '200': {
          description: 'The URL and when it stops answering (`Cache-Control: no-store`)',
          content: { 'application/json': { schema: ChartUrlAnswer } },
        },
        '400': errorAnswer('A body that is not JSON or holds a value outside its range (the error names the field)'),
        '401': {
          ...errorAnswer('No token'),
          headers: { 'WWW-Authenticate': { description: 'Bearer', schema: { type: 'string' } } },
        },
        '403': errorAnswer("A token that is not the server owner's"),
        '404': errorAnswer('No server with this id'),
        '500': INTERNAL_ERROR,
        '503': errorAnswer('Shared state (REDIS_URL) unreachable'),
      },
    },
  },
  '/api/servers/{id}/stats': {
    post: {
      tags: ['player charts'],
      summary: 'Report player counts (hourly buckets; limited per server key, not per address)',
      security: [{ ingestKey: [] }],
      // INGEST_RATE_LIMIT counts per server key, in the route, after the key is checked: not SPEC 8's limit per address.
      'x-rate-limit': 'per-server-key',
      requestParams: {
        path: ServerPath,
        header: z.object({
          'idempotency-key': z.string().min(1).max(255).optional().meta({
            description:
              'Any unique string (a UUID): a repeat of the request with the same key within 24 hours answers 204 again (with `Idempotent-Replayed: true`) and stores nothing',
          }),
        }),
      },
      requestBody: { required: true, content: { 'application/json': { schema: z.union([PlayersBody, SamplesBody]) } } },
      responses: {
        '204': {
          description:
            'Stored: the samples survive a crash from here on (or, with a repeated Idempotency-Key, stored before)',
          headers: {
            ...RATE_LIMIT_HEADERS,
            'Idempotent-Replayed': {
              description: '`true` when this answers a repeated Idempotency-Key and nothing was stored',
              schema: { type: 'string' },
            },
          },
        },
        '400': errorAnswer(
          'A body that is not JSON or not one of the two shapes (the error names the field), an id that is not a UUID, or a malformed Idempotency-Key',
        ),
        '401': {
          ...errorAnswer("No ingest key, or not this server's"),
          headers: { 'WWW-Authenticate': { description: 'Bearer', schema: { type: 'string' } } },
        },
        '404': errorAnswer('No server with this id'),
        '409': errorAnswer('Another request with this Idempotency-Key is being stored (with Retry-After)'),
        '413': errorAnswer('A body over 256 KiB'),
        '422': errorAnswer('This Idempotency-Key was used with another body in the last 24 hours'),
        '429': {
          ...errorAnswer(
            "Over INGEST_RATE_LIMIT for this server's key (60 per minute by default), or over the 10,000 new Idempotency-Keys a server may store per UTC day; the error says which and when to retry",
          ),
          headers: (LIMITED_ANSWERS['429'] as ZodOpenApiResponseObject).headers,
        },
        '500': INTERNAL_ERROR,
        '503': {
          ...errorAnswer(
            'Shared state (REDIS_URL) unreachable, or the disk of STORAGE_DIR full; nothing was stored: retry after Retry-After seconds',
          ),
          headers: STORAGE_UNAVAILABLE.headers,
        },
      },
    },
  },
};
