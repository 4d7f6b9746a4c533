import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import {
  CACHE_HEADERS,
  COMPRESSIBLE_HEADERS,
  LIMITED_ANSWERS,
  NOT_MODIFIED,
  binaryContent,
  errorAnswer,
} from '../http/api-doc.ts';
import { ICON_SIZES, PROJECT_LINKS, SUMMARY_MAX } from './schema.ts';

const Project = z
  .object({
    name: z.string().meta({ description: "The plugin's name, one line" }),
    summary: z.string().max(SUMMARY_MAX).optional().meta({ description: 'One line: the site’s meta description' }),
    description: z.string().optional().meta({ description: 'Markdown as written; the site shows it sanitised' }),
    links: z
      .object(Object.fromEntries(PROJECT_LINKS.map((link) => [link, z.url().optional()])))
      .optional()
      .meta({ description: 'https URLs only' }),
    license: z.string().optional().meta({ description: 'An SPDX license identifier' }),
    icons: z
      .array(z.object({ size: z.int(), url: z.string() }))
      .optional()
      .meta({ description: `The icon as square PNGs of ${ICON_SIZES.join(', ')} px, smallest first` }),
  })
  .meta({ id: 'Project' });

/** GET /api/project and the icon's renditions. */
export const PROJECT_PATHS: ZodOpenApiPathsObject = {
  '/api/project': {
    get: {
      tags: ['project'],
      summary: "The plugin's own identity (data/project.json)",
      responses: {
        '200': {
          description: 'The project',
          headers: COMPRESSIBLE_HEADERS,
          content: { 'application/json': { schema: Project } },
        },
        '304': NOT_MODIFIED,
        '404': errorAnswer('This depot has no data/project.json'),
        ...LIMITED_ANSWERS,
      },
    },
  },
  '/api/project/icon/{size}.png': {
    get: {
      tags: ['project'],
      summary: "The plugin's icon, a square PNG",
      requestParams: { path: z.object({ size: z.enum(ICON_SIZES.map(String) as [string, ...string[]]) }) },
      responses: {
        '200': { description: 'The icon', headers: CACHE_HEADERS, content: binaryContent(['image/png']) },
        '304': NOT_MODIFIED,
        '404': errorAnswer('No icon in data/project.json, or another size'),
        ...LIMITED_ANSWERS,
      },
    },
  },
};
