import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import {
  CACHE_HEADERS,
  COMPRESSIBLE_HEADERS,
  DISPOSITION_HEADERS,
  LIMITED_ANSWERS,
  NOT_MODIFIED,
  RATE_LIMIT_HEADERS,
  binaryContent,
  errorAnswer,
} from '../http/api-doc.ts';
import {
  ChannelQuery,
  JavaVersion,
  LatestVersion,
  PLUGIN_VERSION_ID,
  ServerSoftwareName,
  VersionList,
} from './schema.ts';

const Software = z.object({ serverSoftware: ServerSoftwareName });
const SoftwareAndJava = z.object({ serverSoftware: ServerSoftwareName, javaVersion: JavaVersion });
const VersionId = z.object({
  id: z
    .string()
    .regex(PLUGIN_VERSION_ID)
    .meta({ description: 'A PluginVersion id', example: 'plugin-1768035600000-5f0c1e2a9b' }),
});

const NO_VERSION = errorAnswer(
  'No version matches, or the software, Java version or id is unknown (the error names the valid ones)',
);
const BAD_CHANNEL = errorAnswer('`channel` is not release, beta or alpha (the error names the allowed values)');

/** The operations that pick a latest version take `?channel=` and answer 400 for another value. */
const channelParams = (path: z.ZodObject) => ({ requestParams: { path, query: ChannelQuery } });

function metadata(
  summary: string,
  path: z.ZodObject | undefined,
  schema: z.ZodType,
  description?: string,
): ZodOpenApiOperationObject {
  return {
    tags: ['plugin versions'],
    summary,
    ...(description ? { description } : {}),
    ...(path ? channelParams(path) : {}),
    responses: {
      '200': {
        description: 'JSON',
        headers: { ...COMPRESSIBLE_HEADERS, ...RATE_LIMIT_HEADERS },
        content: { 'application/json': { schema } },
      },
      '304': NOT_MODIFIED,
      ...(path ? { '400': BAD_CHANNEL, '404': NO_VERSION } : {}),
      ...LIMITED_ANSWERS,
    },
  };
}

function download(summary: string, path: z.ZodObject, latest: boolean): ZodOpenApiOperationObject {
  const headers = { ...CACHE_HEADERS, ...DISPOSITION_HEADERS, ...RATE_LIMIT_HEADERS };
  return {
    tags: ['plugin versions'],
    summary,
    ...(latest ? channelParams(path) : { requestParams: { path } }),
    responses: {
      '200': { description: 'The JAR', headers, content: binaryContent(['application/java-archive']) },
      '206': {
        description: 'One byte range of the JAR (Range, If-Range)',
        headers,
        content: binaryContent(['application/java-archive']),
      },
      '304': NOT_MODIFIED,
      ...(latest ? { '400': BAD_CHANNEL } : {}),
      '404': NO_VERSION,
      '416': errorAnswer('The range lies outside the file'),
      ...LIMITED_ANSWERS,
    },
  };
}

/** SPEC 4.1-4.6. */
export const VERSION_PATHS: ZodOpenApiPathsObject = {
  '/api/plugin-versions': { get: metadata('Every version, newest first (SPEC 4.4)', undefined, VersionList) },
  '/api/plugin-versions/latest/{serverSoftware}': {
    get: metadata('The latest version for a software, any Java version (SPEC 4.5)', Software, LatestVersion),
  },
  '/api/plugin-versions/latest/{serverSoftware}/{javaVersion}': {
    get: metadata('The latest version for a software and Java version (SPEC 4.6)', SoftwareAndJava, LatestVersion),
  },
  '/api/plugin-versions/download/latest/{serverSoftware}': {
    get: download('Download the latest JAR for a software (SPEC 4.1)', Software, true),
  },
  '/api/plugin-versions/download/latest/{serverSoftware}/{javaVersion}': {
    get: download('Download the latest JAR for a software and Java version (SPEC 4.2)', SoftwareAndJava, true),
  },
  '/api/plugin-versions/download/{id}': { get: download("Download one version's JAR (SPEC 4.3)", VersionId, false) },
};
