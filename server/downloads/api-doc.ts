import type { ZodOpenApiPathsObject } from 'zod-openapi';
import {
  COMPRESSIBLE_HEADERS,
  LIMITED_ANSWERS,
  NOT_MODIFIED,
  RATE_LIMIT_HEADERS,
  STORAGE_UNAVAILABLE,
} from '../http/api-doc.ts';
import { DownloadCounts } from './counts.ts';
import { DOWNLOAD_RULES } from './paths.ts';

/** Issue 17: download counts. */
export const DOWNLOAD_PATHS: ZodOpenApiPathsObject = {
  [DOWNLOAD_RULES.counts.template]: {
    get: {
      tags: ['plugin versions'],
      summary: 'Download counts per version and software, and per UTC day for the last 365 days',
      description:
        'Counts the JARs the origin served (direct, latest and resolve downloads), each client address once per version and day; a download served by a static host or CDN in front is not counted (docs/api.md: Download counts). Counts reach the store within about a second of the download.',
      responses: {
        '200': {
          description: 'JSON',
          headers: { ...COMPRESSIBLE_HEADERS, ...RATE_LIMIT_HEADERS },
          content: { 'application/json': { schema: DownloadCounts } },
        },
        '304': NOT_MODIFIED,
        ...LIMITED_ANSWERS,
        '503': STORAGE_UNAVAILABLE,
      },
    },
  },
};
