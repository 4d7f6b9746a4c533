import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiResponseObject } from 'zod-openapi';
import { LIMITED_ANSWERS, RATE_LIMIT_HEADERS, errorAnswer } from '../http/api-doc.ts';
import { PLUGIN_VERSION_ID, PluginVersion } from '../versions/schema.ts';
import { PublishPatch } from './patch.ts';

/** Issue 30: the publishing operations, beside the version list's GET and a version's GET in the document. */

const Published = z
  .object({
    version: PluginVersion,
    deploy: z
      .object({ ok: z.boolean(), exitCode: z.int().nullable() })
      .optional()
      .meta({ description: 'With AFTER_SWAP: how the command run on the tree that serves the change went' }),
  })
  .meta({ id: 'PublishedVersion' });
const UNAUTHORIZED: ZodOpenApiResponseObject = {
  ...errorAnswer('No publishing token, or one that is unknown, expired or revoked (one wording for all)'),
  headers: { 'WWW-Authenticate': { description: 'Bearer', schema: { type: 'string' } } },
};
const NOT_PUBLISHING: ZodOpenApiResponseObject = {
  ...errorAnswer(
    'This origin does not publish (PUBLISH=off): send it to the origin that holds data/; or it makes 16 changes already, its disk is full, or another build holds the build lock too long: try again after Retry-After',
  ),
  headers: { 'Retry-After': { description: 'Seconds', schema: { type: 'string' } } },
};
/** A publishing operation's 429: the rate limit's, or the token's share of the origin's changes. */
const PUBLISH_LIMITED = {
  ...LIMITED_ANSWERS,
  '429': {
    ...LIMITED_ANSWERS['429'],
    description:
      'Over the rate limit, or this token has 10 changes waiting for their answer on the origin already: the error says when to retry',
  },
};
const COMMON = {
  tags: ['publishing'],
  security: [{ publishingToken: [] }],
  // A refused token counts against the client's limit; a publish does not.
  'x-rate-limit': 'failures-only' as const,
};

const Metadata = z
  .object({
    pluginVersion: z.string().meta({ example: '1.4.0' }),
    javaVersion: z.union([z.string(), z.number()]).optional().meta({
      example: '21',
      description:
        "The oldest Java the build runs on; a value below what its classes need is refused (400 naming javaVersion). Absent: the smallest listed Java that loads the JAR's classes (refused when it holds none outside META-INF/versions/)",
    }),
    serverSoftware: z.array(z.string()).meta({ example: ['PaperMC', 'Folia'] }),
    minecraftVersions: z.string().optional().meta({ example: '1.20.6-1.21.4' }),
    proxyVersion: z.string().optional(),
    channel: z.enum(['release', 'beta', 'alpha']).optional(),
    changelog: z.string().optional().meta({ description: 'Markdown, at most 64 KiB' }),
    descriptorCheck: z.boolean().optional().meta({
      description:
        "false: released even when the JAR's descriptors do not back serverSoftware (`--no-descriptor-check`); what would have been refused is kept in the record's descriptorWarnings",
    }),
  })
  .meta({ id: 'PublishMetadata', description: "`depot release`'s options, as JSON" });

const publish: ZodOpenApiOperationObject = {
  ...COMMON,
  summary: 'Publish a version (a release over HTTP)',
  description:
    'The JAR streams to disk as it arrives; the answer comes once this origin serves the new version (its metadata and its download). The same checks as `depot release`.',
  requestParams: {
    header: z.object({
      'idempotency-key': z.string().min(1).max(255).optional().meta({
        description:
          'Any unique string (a UUID): a retry with the same key, file and metadata within 24 hours answers the release it made (`Idempotent-Replayed: true`) instead of a 409',
      }),
    }),
  },
  requestBody: {
    required: true,
    content: {
      'multipart/form-data': {
        schema: z.object({ file: z.string().meta({ format: 'binary' }), metadata: Metadata }),
      },
    },
  },
  responses: {
    '201': {
      description: 'Released and served',
      headers: {
        Location: { description: '/api/plugin-versions/<id>', schema: { type: 'string' } },
        'Idempotent-Replayed': {
          description: '`true` when this answers a repeated Idempotency-Key: nothing was released again',
          schema: { type: 'string' },
        },
      },
      content: { 'application/json': { schema: Published } },
    },
    '400': errorAnswer('Bad metadata (the error and `field` name it), a missing part, or a token in the URL'),
    '401': UNAUTHORIZED,
    '403': errorAnswer('The token lacks the scope `publish` (`scope` names it)'),
    '409': errorAnswer(
      'Already released (`existingId` names the version with the same bytes or version), or a publish with this Idempotency-Key still running (Retry-After)',
    ),
    '413': errorAnswer('The file is larger than PUBLISH_MAX_BYTES (64 MiB by default)'),
    '415': errorAnswer('The body is not multipart/form-data'),
    '422': errorAnswer(
      'The file is not a plugin JAR (a zip with a plugin descriptor), or the Idempotency-Key was used with another upload',
    ),
    '503': NOT_PUBLISHING,
    ...PUBLISH_LIMITED,
  },
};

const VersionPath = z.object({ id: z.string().regex(PLUGIN_VERSION_ID) });

const patch: ZodOpenApiOperationObject = {
  ...COMMON,
  summary: 'Edit, withdraw or restore a version',
  description:
    "`depot edit`, `withdraw` and `restore` over HTTP, as one change: `withdrawn: {reason}` withdraws, `null` restores; every field is checked before anything changes. The JAR's fields never change. Answered once this origin serves the change.",
  requestParams: { path: VersionPath },
  requestBody: { required: true, content: { 'application/json': { schema: PublishPatch } } },
  responses: {
    '200': {
      description: 'Changed and served (or already as asked)',
      headers: RATE_LIMIT_HEADERS,
      content: { 'application/json': { schema: Published } },
    },
    '400': errorAnswer('A field breaks its rule (the error and `field` name it), or a token in the URL'),
    '401': UNAUTHORIZED,
    '403': errorAnswer(
      "The token lacks the scope the change needs (`scope`: `edit` for fields, `withdraw` for `withdrawn`), or the version is another user's and the token was not made with --any-version",
    ),
    '404': errorAnswer('No version with this id'),
    '409': errorAnswer('Restoring a version that is not withdrawn: nothing of the PATCH is changed'),
    '415': errorAnswer('The body is not JSON'),
    '503': NOT_PUBLISHING,
    ...PUBLISH_LIMITED,
  },
};

export const PUBLISH_OPERATIONS = { publish, patch };
