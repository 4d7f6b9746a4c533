import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import {
  CACHE_HEADERS,
  COMPRESSIBLE_HEADERS,
  LIMITED_ANSWERS,
  NOT_MODIFIED,
  RATE_LIMIT_HEADERS,
  errorAnswer,
} from '../http/api-doc.ts';
import { HASH_ALGORITHMS, type HashAlgorithm } from './paths.ts';
import { LatestVersion, PLUGIN_VERSION_ID } from './schema.ts';

// Issue 15: checksum sidecars and lookup by hash, declared beside SPEC 4.1-4.6 (VERSION_PATHS).

const VersionId = z.object({
  id: z
    .string()
    .regex(PLUGIN_VERSION_ID)
    .meta({ description: 'A PluginVersion id', example: 'plugin-1768035600000-5f0c1e2a9b' }),
});

const ByHashParams = z.object({
  algorithm: z.enum(HASH_ALGORITHMS).meta({ description: 'Digest algorithm' }),
  hash: z
    .string()
    .regex(/^(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{128})$/)
    .meta({ description: "The JAR's digest in hex, any letter case: 64 digits for sha256, 128 for sha512" }),
});

function sidecar(algorithm: HashAlgorithm): ZodOpenApiOperationObject {
  const tool = `${algorithm}sum`;
  return {
    tags: ['plugin versions'],
    summary: `The JAR's ${algorithm} in \`${tool} -c\` format`,
    description: `One line, \`<hex>  <fileName>\\n\`: save it beside the downloaded JAR and run \`${tool} -c <file>\`.`,
    requestParams: { path: VersionId },
    responses: {
      '200': {
        description: `\`${tool} -c\` input`,
        headers: { ...CACHE_HEADERS, ...RATE_LIMIT_HEADERS },
        content: { 'text/plain': { schema: z.string() } },
      },
      '304': NOT_MODIFIED,
      '404': errorAnswer('No version has this id'),
      ...LIMITED_ANSWERS,
    },
  };
}

const BY_HASH: ZodOpenApiOperationObject = {
  tags: ['plugin versions'],
  summary: 'The version whose JAR has this digest',
  description:
    'Identifies a JAR found on a server: the version object as the latest endpoint answers it. Hex in any letter case; should two versions hold the same bytes, the newest.',
  requestParams: { path: ByHashParams },
  responses: {
    '200': {
      description: 'JSON',
      headers: { ...COMPRESSIBLE_HEADERS, ...RATE_LIMIT_HEADERS },
      content: { 'application/json': { schema: LatestVersion } },
    },
    '304': NOT_MODIFIED,
    '400': errorAnswer(
      'The algorithm is not sha256 or sha512, or the hash is not its hex digest (the error names which)',
    ),
    '404': errorAnswer('No version has a JAR with this digest'),
    ...LIMITED_ANSWERS,
  },
};

export const INTEGRITY_PATHS: ZodOpenApiPathsObject = {
  '/api/plugin-versions/download/{id}.sha256': { get: sidecar('sha256') },
  '/api/plugin-versions/download/{id}.sha512': { get: sidecar('sha512') },
  '/api/plugin-versions/by-hash/{algorithm}/{hash}': { get: BY_HASH },
};
