import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { CACHE_HEADERS, LIMITED_ANSWERS, NOT_MODIFIED, RATE_LIMIT_HEADERS, errorAnswer } from '../http/api-doc.ts';
import { ChannelQuery, JavaVersion, ServerSoftwareName } from './schema.ts';
import { MAX_LOOKUP_HASHES, UpdateLookupAnswer, UpdateLookupBody } from './update-lookup-schema.ts';

// Issue 31: the answers existing updater libraries read (docs/updaters.md), beside SPEC 4.1-4.6.

const Software = z.object({ serverSoftware: ServerSoftwareName });
const SoftwareAndJava = Software.extend({ javaVersion: JavaVersion });

function latestText(summary: string, path: z.ZodObject): ZodOpenApiOperationObject {
  return {
    tags: ['plugin versions'],
    summary,
    description:
      "The `pluginVersion` of the latest endpoint's answer for the same software, Java version and channel, alone, without a trailing newline: for updaters that read a URL holding the latest version string. A 404 or 400 is a JSON error, as from the JSON form.",
    requestParams: { path, query: ChannelQuery },
    responses: {
      '200': {
        description: 'The plugin version, such as `1.4.0`',
        headers: { ...CACHE_HEADERS, ...RATE_LIMIT_HEADERS },
        content: { 'text/plain': { schema: z.string() } },
      },
      '304': NOT_MODIFIED,
      '400': errorAnswer('`channel` is not release, beta or alpha (the error names the allowed values)'),
      '404': errorAnswer(
        'No version matches, or the software or Java version is unknown (the error names the valid ones)',
      ),
      ...LIMITED_ANSWERS,
    },
  };
}

const UPDATE_LOOKUP: ZodOpenApiOperationObject = {
  tags: ['plugin versions'],
  summary: "Modrinth's hash-based update lookup (`POST /v2/version_files/update`)",
  description: [
    "For updaters written against Modrinth's API: per hash of one of this depot's JARs, the build its server should run",
    '(resolve: the first loader that has one, its own builds before those of the softwares it runs; the newest supporting any of `game_versions`;',
    "on Java up to the higher of the JAR's and the one every server of that Minecraft version runs (25 for 26.1: a server that moved there from a Java 21 JAR is offered Java 25 builds);",
    'in its channel unless `version_types` says), as a Modrinth version object.',
    `Hashes of no JAR of this depot, or with no such build, are left out. At most ${MAX_LOOKUP_HASHES} hashes and 256 KiB.`,
    "Modrinth's sha1 is not held: send sha512 (Modrinth takes it too).",
  ].join(' '),
  requestBody: { required: true, content: { 'application/json': { schema: UpdateLookupBody } } },
  responses: {
    '200': {
      description: 'Hash -> version object (`Cache-Control: no-store`)',
      headers: RATE_LIMIT_HEADERS,
      content: { 'application/json': { schema: UpdateLookupAnswer } },
    },
    '400': errorAnswer(
      'A body that is not JSON, an unknown algorithm or loader, a hash of the wrong shape, or too many hashes (the error names the field)',
    ),
    '413': errorAnswer('A body over 256 KiB'),
    '415': errorAnswer(
      'A body not sent as JSON (`Content-Type: application/json`): a text/plain POST, which a web page may send to any site without a preflight, is not taken',
    ),
    ...LIMITED_ANSWERS,
  },
};

export const UPDATER_PATHS: ZodOpenApiPathsObject = {
  '/api/plugin-versions/latest/{serverSoftware}.txt': {
    get: latestText('The latest plugin version for a software, as plain text', Software),
  },
  '/api/plugin-versions/latest/{serverSoftware}/{javaVersion}.txt': {
    get: latestText('The latest plugin version for a software and Java version, as plain text', SoftwareAndJava),
  },
  '/api/plugin-versions/by-hash/update': { post: UPDATE_LOOKUP },
};
