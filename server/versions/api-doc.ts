import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject, ZodOpenApiResponsesObject } from 'zod-openapi';
import {
  CACHE_HEADERS,
  COMPRESSIBLE_HEADERS,
  DIGEST_HEADERS,
  DISPOSITION_HEADERS,
  LOCATION_HEADERS,
  LIMITED_ANSWERS,
  NOT_MODIFIED,
  RATE_LIMIT_HEADERS,
  binaryContent,
  errorAnswer,
} from '../http/api-doc.ts';
import {
  ChannelQuery,
  CurrentVersion,
  JavaVersion,
  LatestVersion,
  PLUGIN_VERSION_ID,
  PluginVersion,
  ServerSoftwareName,
  UpdateCheck,
  VersionList,
  ListQuery,
  ResolveQuery,
  ResolvedVersion,
} from './schema.ts';
import { describeChain } from './compat.ts';
import { FEED_ENTRIES } from './feed.ts';
import { SERVER_SOFTWARE } from './software.ts';
import { INTEGRITY_PATHS } from './integrity-api-doc.ts';
import { UPDATER_PATHS } from './updater-api-doc.ts';

const Software = z.object({ serverSoftware: ServerSoftwareName });
const SoftwareAndJava = z.object({ serverSoftware: ServerSoftwareName, javaVersion: JavaVersion });
const VersionId = z.object({
  id: z
    .string()
    .regex(PLUGIN_VERSION_ID)
    .meta({ description: 'A PluginVersion id', example: 'plugin-1768035600000-5f0c1e2a9b' }),
});

/** One version by id: the list's object, `createdByUser` included. */
const OneVersion = z.object({ version: PluginVersion }).meta({ id: 'OneVersion' });

function versionByIdOperation(): ZodOpenApiOperationObject {
  const operation = metadata('One version by id, as the list shows it', undefined, OneVersion);
  return {
    ...operation,
    description:
      "The version object of the list's entry (`createdByUser` included), precomputed for every version. 404 names the id; a segment of another shape is no endpoint (404 naming the path).",
    requestParams: { path: VersionId },
    responses: {
      ...operation.responses,
      '404': errorAnswer('No version has this id, or the id is not of the shape plugin-<digits>-<letters and digits>'),
    },
  };
}

const UpdateCheckParams = SoftwareAndJava.extend({ current: CurrentVersion });

const NO_VERSION = errorAnswer(
  'No version matches, or the software, Java version or id is unknown (the error names the valid ones)',
);
const BAD_CHANNEL = errorAnswer(
  "`channel` is not release, beta or alpha (the error names the allowed values), or an update check's `current` is longer than 64 characters",
);

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

/** Issue 29: on the download by id of a withdrawn version only (a latest or resolved JAR never is one). */
const WITHDRAWAL_HEADERS = {
  Deprecation: {
    description:
      'RFC 9745, on a withdrawn version only: when it was withdrawn, as a structured-field date (`@` and seconds since the epoch). Its Cache-Control is then 60 s, not immutable',
    schema: { type: 'string' as const, pattern: '^@\\d+$' },
    required: false,
  },
  Link: {
    description:
      'On a withdrawn version that has one: the download its users move to, `</api/plugin-versions/download/<id>>; rel="successor-version"` (RFC 8288, RFC 5829), the newest version not withdrawn of its channel, Java version and first software that has one',
    schema: {
      type: 'string' as const,
      pattern: '^</api/plugin-versions/download/plugin-\\d+-[A-Za-z0-9]+>; rel="successor-version"$',
    },
    required: false,
  },
};

function download(summary: string, path: z.ZodObject, latest: boolean): ZodOpenApiOperationObject {
  const headers = {
    ...CACHE_HEADERS,
    ...DISPOSITION_HEADERS,
    ...DIGEST_HEADERS,
    ...(latest ? LOCATION_HEADERS : WITHDRAWAL_HEADERS),
    ...RATE_LIMIT_HEADERS,
  };
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

function feed(summary: string, path: z.ZodObject | undefined): ZodOpenApiOperationObject {
  return {
    tags: ['plugin versions'],
    summary,
    description: `Atom (RFC 4287), the newest ${FEED_ENTRIES} versions first: title (version, channel, softwares, Java), the changelog as sanitised HTML and the download link, absolute under PUBLIC_URL.`,
    ...(path ? { requestParams: { path } } : {}),
    responses: {
      '200': {
        description: 'An Atom feed',
        headers: { ...COMPRESSIBLE_HEADERS, ...RATE_LIMIT_HEADERS },
        content: { 'application/atom+xml': { schema: z.string() } },
      },
      '304': NOT_MODIFIED,
      ...(path ? { '404': errorAnswer('The software is unknown (the error names the valid ones)') } : {}),
      ...LIMITED_ANSWERS,
    },
  };
}

const UPDATE_CHECK_DESCRIPTION = [
  'One cheap request a plugin sends to learn whether it is up to date, cached like the latest endpoints.',
  '`status` compares `current` with the latest version for the software, Java version and channel by semantic version:',
  '`latest`, `outdated` (with `behind` newer versions), `ahead` (a dev build, or a beta when the release channel was asked),',
  'or `unknown` when `current` is not a semantic version. 404 when the software has no version for that Java version and channel,',
  'as the latest endpoint answers; 400 for a `current` longer than 64 characters or an unknown channel.',
  'A withdrawn version is never `latest`: when every build of `current` was withdrawn, the answer adds `withdrawn: {reason}` and `moveTo`.',
].join(' ');

// Issue 15: compatible resolution and the Minecraft filter.

function versionListOperation(): ZodOpenApiOperationObject {
  const operation = metadata('Every version, newest first (SPEC 4.4)', undefined, VersionList);
  return {
    ...operation,
    description:
      'With `?minecraft=`, only the versions that run on that Minecraft version (`minecraftVersions`, else exactly `minecraftVersion`; a version without either, a proxy build, states none and is kept; a 26.x pre-release such as 26.2-snapshot-1 only the versions naming it). 400 for a malformed `minecraft`.',
    requestParams: { query: ListQuery },
    responses: {
      ...operation.responses,
      '400': errorAnswer('`minecraft` is not a version such as 1.21.4, 1.21, 26.1.1 or 26.2-snapshot-1'),
    },
  };
}

const RESOLVE_DESCRIPTION = [
  'The best build for a server: its own software first, then the softwares whose plugins it runs, in order',
  `(${SERVER_SOFTWARE.map((software) => `${software}: ${describeChain(software)}`).join('; ')});`,
  'within one software the newest (SPEC 2.4.2), whatever its Java version.',
  'The Java version is a minimum: a Java 17 build runs on Java 21, never a build for a newer Java than asked; without it, with `minecraft`, at most the Java every server of that Minecraft version runs (25 from 26.1, 21 from 1.20.5: docs/api.md; a proxy is not capped), and without either any Java.',
  '`minecraft` keeps the builds that run on that version (a 26.x pre-release such as 26.2-snapshot-1: only builds naming it); `channel` as on the latest endpoints.',
  '404 names what would resolve if the server changed one thing (its Java version, Minecraft version or channel).',
].join(' ');

const BAD_RESOLVE_QUERY = errorAnswer(
  '`channel` is not release, beta or alpha, or `minecraft` is not a version such as 1.21.4, 26.1.1 or 26.2-snapshot-1 (the error names the parameter and the allowed values)',
);
const NO_BUILD = errorAnswer(
  'No build runs on that server (the error says what would resolve if one thing changed), or the software or Java version is unknown (the error names the valid ones)',
);

function resolveOperation(summary: string, path: z.ZodObject, jar: boolean): ZodOpenApiOperationObject {
  const jarHeaders = { ...CACHE_HEADERS, ...DISPOSITION_HEADERS, ...RATE_LIMIT_HEADERS };
  const ok: ZodOpenApiResponsesObject = jar
    ? {
        '200': { description: 'The JAR', headers: jarHeaders, content: binaryContent(['application/java-archive']) },
        '206': {
          description: 'One byte range of the JAR (Range, If-Range)',
          headers: jarHeaders,
          content: binaryContent(['application/java-archive']),
        },
      }
    : {
        '200': {
          description: 'JSON',
          headers: { ...COMPRESSIBLE_HEADERS, ...RATE_LIMIT_HEADERS },
          content: { 'application/json': { schema: ResolvedVersion } },
        },
      };
  return {
    tags: ['plugin versions'],
    summary,
    description: RESOLVE_DESCRIPTION,
    requestParams: { path, query: ResolveQuery },
    responses: {
      ...ok,
      '304': NOT_MODIFIED,
      '400': BAD_RESOLVE_QUERY,
      '404': NO_BUILD,
      ...(jar ? { '416': errorAnswer('The range lies outside the file') } : {}),
      ...LIMITED_ANSWERS,
    },
  };
}

const RESOLVE_PATHS: ZodOpenApiPathsObject = {
  '/api/plugin-versions/resolve/{serverSoftware}': {
    get: resolveOperation('The best build for a server software, any Java version', Software, false),
  },
  '/api/plugin-versions/resolve/{serverSoftware}/{javaVersion}': {
    get: resolveOperation('The best build for a server software and Java version', SoftwareAndJava, false),
  },
  '/api/plugin-versions/download/resolve/{serverSoftware}': {
    get: resolveOperation('Download the best build for a server software, any Java version', Software, true),
  },
  '/api/plugin-versions/download/resolve/{serverSoftware}/{javaVersion}': {
    get: resolveOperation('Download the best build for a server software and Java version', SoftwareAndJava, true),
  },
};

/** SPEC 4.1-4.6, and the update check. */
export const VERSION_PATHS: ZodOpenApiPathsObject = {
  '/api/plugin-versions': { get: versionListOperation() },
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
  '/api/plugin-versions/feed.atom': { get: feed('Every release, as an Atom feed', undefined) },
  '/api/plugin-versions/feed/{serverSoftware}.atom': {
    get: feed("One software's releases, as an Atom feed", Software),
  },
  '/api/plugin-versions/{id}': { get: versionByIdOperation() },
  '/api/plugin-versions/download/{id}': { get: download("Download one version's JAR (SPEC 4.3)", VersionId, false) },
  '/api/plugin-versions/update-check/{serverSoftware}/{javaVersion}/{current}': {
    get: metadata(
      'Is this version the latest? (update check)',
      UpdateCheckParams,
      UpdateCheck,
      UPDATE_CHECK_DESCRIPTION,
    ),
  },
  ...RESOLVE_PATHS,
  ...INTEGRITY_PATHS,
  ...UPDATER_PATHS,
};
