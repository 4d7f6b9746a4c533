import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import {
  CACHE_HEADERS,
  INTERNAL_ERROR,
  NOT_MODIFIED,
  STORAGE_UNAVAILABLE,
  binaryContent,
  errorAnswer,
} from '../http/api-doc.ts';
import { ServerId } from '../charts/schema.ts';
import { JavaVersion, ServerSoftwareName } from '../versions/schema.ts';
import { BadgeEndpoint, BadgeFormatName, BadgeQuery, LatestBadgeQuery } from './schema.ts';

function badge(
  summary: string,
  path: z.ZodObject,
  query: z.ZodObject,
  errors: Record<string, string>,
  readsStore = false,
): ZodOpenApiOperationObject {
  return {
    tags: ['badges'],
    summary,
    requestParams: { path: path.extend({ format: BadgeFormatName }), query },
    responses: {
      '200': {
        description: 'The badge (SVG answers also carry Vary: Accept-Encoding), or its endpoint JSON',
        headers: CACHE_HEADERS,
        content: {
          ...binaryContent(['image/svg+xml', 'image/png']),
          'application/json': { schema: BadgeEndpoint },
        },
      },
      '304': NOT_MODIFIED,
      ...Object.fromEntries(Object.entries(errors).map(([status, description]) => [status, errorAnswer(description)])),
      // No 429: not rate limited, as a README's badges come through a few shared proxies (GitHub's camo).
      '500': INTERNAL_ERROR,
      ...(readsStore ? { '503': STORAGE_UNAVAILABLE } : {}),
    },
  };
}

const BAD_STYLE = 'A style other than flat, flat-square, plastic, for-the-badge or social';

/** Issue 17: badges, live. */
export const BADGE_PATHS: ZodOpenApiPathsObject = {
  '/api/badges/latest/{serverSoftware}.{format}': {
    get: badge(
      'Latest version for a server software, e.g. /api/badges/latest/papermc.svg',
      z.object({ serverSoftware: ServerSoftwareName }),
      LatestBadgeQuery,
      {
        '400': `${BAD_STYLE}, or a channel other than release, beta or alpha`,
        '404': 'An unknown software or format, or no version for it (the error names the valid ones)',
      },
    ),
  },
  '/api/badges/latest/{serverSoftware}/{javaVersion}.{format}': {
    get: badge(
      'Latest version for a server software and Java version, e.g. /api/badges/latest/papermc/21.svg',
      z.object({ serverSoftware: ServerSoftwareName, javaVersion: JavaVersion }),
      LatestBadgeQuery,
      {
        '400': `${BAD_STYLE}, or a channel other than release, beta or alpha`,
        '404': 'An unknown software, Java version or format, or no version for them (the error names the valid ones)',
      },
    ),
  },
  '/api/badges/downloads.{format}': {
    get: badge(
      'Total downloads counted (GET /api/plugin-versions/downloads)',
      z.object({}),
      BadgeQuery,
      { '400': BAD_STYLE, '404': 'An unknown format' },
      true,
    ),
  },
  '/api/badges/players/{id}.{format}': {
    get: badge(
      "Players online now on a public server: the mean of this UTC hour's samples (the previous hour's until one arrives)",
      z.object({ id: ServerId }),
      BadgeQuery,
      {
        '400': `${BAD_STYLE}, or an id that is not a UUID`,
        '403': 'A private server',
        '404': 'No server with this id, or an unknown format',
      },
      true,
    ),
  },
};
