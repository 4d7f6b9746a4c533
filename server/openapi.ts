import { z } from 'zod';
import { createDocument, type ZodOpenApiPathsObject } from 'zod-openapi';
import { BRAND_PATHS } from './brands/api-doc.ts';
import { CHART_PATHS } from './charts/api-doc.ts';
import { BADGE_PATHS } from './badges/api-doc.ts';
import { DOWNLOAD_PATHS } from './downloads/api-doc.ts';
import { COMPRESSIBLE_HEADERS, HEADER_COMPONENTS, INTERNAL_ERROR, NOT_MODIFIED } from './http/api-doc.ts';
import { VERSION_PATHS } from './versions/api-doc.ts';
import { PUBLISH_OPERATIONS } from './publish/api-doc.ts';
import { PROJECT_PATHS } from './project/api-doc.ts';

import { OPENAPI_PATH } from './helpers/openapi-path.ts';

/** GET /healthz: the process answers and which tree it serves. */
const Health = z
  .object({ status: z.literal('ok'), tree: z.string().meta({ description: 'Name of the dist/ tree being served' }) })
  .meta({ id: 'Health' });

/**
 * Every endpoint as the document describes it (zod-openapi's input: zod schemas, not yet JSON
 * Schema). The edge's endpoint table reads this directly: building the document costs about
 * 0.2 s, which neither the origin's start nor the CLI should pay before it is asked for.
 */
export const OPENAPI_PATHS = {
  ...VERSION_PATHS,
  '/api/plugin-versions': { ...VERSION_PATHS['/api/plugin-versions'], post: PUBLISH_OPERATIONS.publish },
  '/api/plugin-versions/{id}': { ...VERSION_PATHS['/api/plugin-versions/{id}'], patch: PUBLISH_OPERATIONS.patch },
  ...DOWNLOAD_PATHS,
  ...BRAND_PATHS,
  ...CHART_PATHS,
  ...BADGE_PATHS,
  ...PROJECT_PATHS,
  '/healthz': {
    get: {
      tags: ['operations'],
      summary: 'Liveness for load balancers',
      responses: {
        '200': { description: 'Serving', content: { 'application/json': { schema: Health } } },
        '500': INTERNAL_ERROR,
      },
    },
  },
  [OPENAPI_PATH]: {
    get: {
      tags: ['operations'],
      summary: 'This document',
      responses: {
        '200': {
          description: 'OpenAPI 3.1',
          headers: COMPRESSIBLE_HEADERS,
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        '304': NOT_MODIFIED,
        '500': INTERNAL_ERROR,
      },
    },
  },
} satisfies ZodOpenApiPathsObject;

/**
 * The OpenAPI 3.1 document of every endpoint, built from the zod schemas the routes validate with,
 * so the document and the validation cannot drift apart. Served at /api/openapi.json (precomputed);
 * built on first use.
 */
export function openApiDocument() {
  return (document ??= createDocument({
    openapi: '3.1.0',
    info: {
      title: 'plugin depot',
      version: '1.0.0',
      description:
        'Plugin JARs and version metadata per server software and Java version, brand images of server softwares, and player charts. ' +
        'Errors are JSON `{"error": "..."}`. Public GET endpoints send `Access-Control-Allow-Origin: *`; limited ones allow 100 requests per 15 minutes per client address by default.',
    },
    tags: [
      { name: 'plugin versions', description: 'SPEC 4.1-4.6' },
      { name: 'brand images', description: 'SPEC 4.7-4.8' },
      { name: 'player charts', description: 'SPEC 4.9-4.10 and ingestion' },
      { name: 'badges', description: 'shields.io-style badges: SVG, PNG and endpoint JSON' },
      { name: 'publishing', description: 'Releases and corrections from CI, with a publishing token' },
      { name: 'project', description: "The plugin's own identity: name, summary, links, licence, icon" },
      { name: 'operations', description: 'For load balancers and tools' },
    ],
    paths: OPENAPI_PATHS,
    components: {
      headers: HEADER_COMPONENTS,
      securitySchemes: {
        ownerToken: {
          type: 'http',
          scheme: 'bearer',
          description: "A user's token, printed once by `depot user add`: reads that user's private charts",
        },
        publishingToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'A publishing token (`dpp_...`), printed once by `depot token add`: acts as its user',
        },
        ingestKey: {
          type: 'http',
          scheme: 'bearer',
          description: "A server's ingest key, printed once by `depot server add`: reports its player counts",
        },
      },
    },
  }));
}

let document: ReturnType<typeof createDocument> | undefined;
