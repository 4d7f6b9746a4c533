import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject, ZodOpenApiResponsesObject } from 'zod-openapi';
import {
  CACHE_HEADERS,
  COMPRESSIBLE_HEADERS,
  DISPOSITION_HEADERS,
  LIMITED_ANSWERS,
  NOT_MODIFIED,
  RATE_LIMIT_HEADERS,
  ErrorBody,
  binaryContent,
  errorAnswer,
} from '../http/api-doc.ts';
import { CONTENT_TYPES } from './formats.ts';
import {
  BrandList,
  BrandNotFound,
  BrandParam,
  BrandQuery,
  SizedFileName,
  VariantFileName,
  VariantNotFound,
} from './schema.ts';

const IMAGE_TYPES = [...new Set(Object.values(CONTENT_TYPES))];

/** Every image answer: the image, a 304, 400 for bad parameters, 404 naming what exists. */
function imageAnswers(badRequest: string): ZodOpenApiResponsesObject {
  return {
    '200': {
      description: 'The image. SVG answers also carry Vary: Accept-Encoding and come compressed when asked',
      headers: { ...CACHE_HEADERS, ...DISPOSITION_HEADERS, ...RATE_LIMIT_HEADERS },
      content: binaryContent(IMAGE_TYPES),
    },
    '304': NOT_MODIFIED,
    '400': errorAnswer(badRequest),
    '404': errorAnswer(
      'Unknown brand (with availableBrands), unknown variant (with availableVariants), or a static link file name that is not <variant or size>.<format>',
      z.union([BrandNotFound, VariantNotFound, ErrorBody]),
    ),
    ...LIMITED_ANSWERS,
  };
}

function image(summary: string, path: z.ZodObject, query?: z.ZodObject): ZodOpenApiOperationObject {
  return {
    tags: ['brand images'],
    summary,
    description: 'Precomputed and cached answers do not count against the rate limit and are served over it (SPEC 8).',
    requestParams: { path, ...(query ? { query } : {}) },
    responses: imageAnswers(
      query ? 'A bad size, format or download value (the error names each)' : 'A size above 2048',
    ),
  };
}

/** SPEC 4.7, 4.8 and the clean static links the build precomputes. */
export const BRAND_PATHS: ZodOpenApiPathsObject = {
  '/api/image/brand': {
    get: {
      tags: ['brand images'],
      summary: 'Brands and their variants (SPEC 4.8)',
      responses: {
        '200': {
          description: 'JSON',
          headers: { ...COMPRESSIBLE_HEADERS, ...RATE_LIMIT_HEADERS },
          content: { 'application/json': { schema: BrandList } },
        },
        '304': NOT_MODIFIED,
        ...LIMITED_ANSWERS,
      },
    },
  },
  '/api/image/brand/{brand}': {
    get: image('A brand image at any size and format (SPEC 4.7)', z.object({ brand: BrandParam }), BrandQuery),
  },
  '/brand/{brand}/{file}': {
    get: image(
      'Static link to a variant at its original size, e.g. /brand/papermc/light.webp',
      z.object({ brand: BrandParam, file: VariantFileName }),
    ),
  },
  '/brand/{brand}/{variant}/{file}': {
    get: image(
      'Static link to a variant at a width, e.g. /brand/velocity/white/128.png (precomputed at 16-1024 px)',
      z.object({
        brand: BrandParam,
        variant: z.string().meta({ description: 'A variant of the brand, any letter case' }),
        file: SizedFileName,
      }),
    ),
  },
};
