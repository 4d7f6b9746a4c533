import { z } from 'zod';
import type { ZodOpenApiResponseObject, ZodOpenApiResponsesObject } from 'zod-openapi';

// Pieces of the OpenAPI document shared by every route family: the error body, the headers the edge
// adds, and the answers every endpoint of a kind can give.

/** SPEC 2.9: every error is this object (brand and variant misses add one field). */
export const ErrorBody = z
  .object({ error: z.string() })
  .meta({ id: 'Error', description: 'SPEC 2.9: a message naming the bad parameter and what is allowed' });

const header = (description: string, schema: Record<string, unknown> = { type: 'string' }, required = false) => ({
  description,
  schema,
  required,
});
const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

export const HEADER_COMPONENTS = {
  ETag: header(
    'Strong validator of the bytes; send it back in If-None-Match for a 304',
    { type: 'string', pattern: '^"[^"]+"$' },
    true,
  ),
  CacheControl: header('How long the answer may be kept (docs/api.md: Endpoints)', { type: 'string' }, true),
  Vary: header('Accept-Encoding on JSON and SVG answers, which come as br, gzip or identity'),
  RateLimitPolicy: header('IETF RateLimit-Policy: "default";q=<requests>;w=<window seconds>'),
  RateLimit: header('IETF RateLimit: "default";r=<requests left>;t=<seconds to the next window>'),
  XRateLimitLimit: header('Requests allowed per window', { type: 'string', pattern: '^\\d+$' }),
  XRateLimitRemaining: header('Requests left in this window', { type: 'string', pattern: '^\\d+$' }),
  XRateLimitReset: header('Seconds until the window resets', { type: 'string', pattern: '^\\d+$' }),
  RetryAfter: header('Seconds to wait before the next request', { type: 'string', pattern: '^\\d+$' }),
  ContentDisposition: header('attachment (downloads) or inline, with the file name'),
  ReprDigest: header(
    'RFC 9530: SHA-256 and SHA-512 of the whole JAR, base64 in structured-field byte sequences (`sha-256=:...:, sha-512=:...:`); the same on a 206 and a HEAD',
    { type: 'string', pattern: '^sha-256=:[A-Za-z0-9+/]{43}=:, sha-512=:[A-Za-z0-9+/]{86}==:$' },
    true,
  ),
  ContentLocation: header(
    "Where this answer's immutable copy lives: the version's own download (`/api/plugin-versions/download/<id>`)",
    { type: 'string', pattern: '^/api/plugin-versions/download/plugin-\\d+-[A-Za-z0-9]+$' },
    true,
  ),
};

export const CACHE_HEADERS = { ETag: ref('ETag'), 'Cache-Control': ref('CacheControl') };
export const COMPRESSIBLE_HEADERS = { ...CACHE_HEADERS, Vary: ref('Vary') };
/** Sent on every answer of a limited endpoint (SPEC 8) while the limit is on, the legacy X- names too. */
export const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': ref('RateLimitPolicy'),
  RateLimit: ref('RateLimit'),
  'X-RateLimit-Limit': ref('XRateLimitLimit'),
  'X-RateLimit-Remaining': ref('XRateLimitRemaining'),
  'X-RateLimit-Reset': ref('XRateLimitReset'),
};
export const DISPOSITION_HEADERS = { 'Content-Disposition': ref('ContentDisposition') };
/** Every JAR answer's digests (RFC 9530), and a latest download's immutable location. */
export const DIGEST_HEADERS = { 'Repr-Digest': ref('ReprDigest') };
export const LOCATION_HEADERS = { 'Content-Location': ref('ContentLocation') };

export function errorAnswer(description: string, schema: z.ZodType = ErrorBody): ZodOpenApiResponseObject {
  return { description, content: { 'application/json': { schema } } };
}

export const NOT_MODIFIED: ZodOpenApiResponseObject = {
  description: 'Not Modified: If-None-Match matched the current ETag',
  headers: CACHE_HEADERS,
};
export const INTERNAL_ERROR = errorAnswer('Internal server error; the cause is logged, never sent');
/** Answers that need shared state (servers, tokens, samples) while Redis is unreachable. */
export const STORAGE_UNAVAILABLE: ZodOpenApiResponseObject = {
  ...errorAnswer('Shared state (REDIS_URL) unreachable; retry after Retry-After seconds'),
  headers: { 'Retry-After': ref('RetryAfter') },
};

/**
 * The answers every rate-limited endpoint adds (SPEC 8): 429 over the limit, 500. A 429 is what the
 * rate limit reads to know an endpoint is limited.
 */
export const LIMITED_ANSWERS: ZodOpenApiResponsesObject = {
  '429': {
    ...errorAnswer('Over the rate limit: the error says when to retry'),
    headers: { ...RATE_LIMIT_HEADERS, 'Retry-After': ref('RetryAfter') },
  },
  '500': INTERNAL_ERROR,
};

/** The body of a binary answer, for any of `types`. */
export function binaryContent(types: readonly string[]) {
  return Object.fromEntries(
    types.map((type) => [type, { schema: { type: 'string' as const, contentMediaType: type } }]),
  );
}
