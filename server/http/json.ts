import { HTTPError, assertBodySize, type H3Event } from 'h3';
import type { z } from 'zod';
import { describeIssues } from '../helpers/describe-issues.ts';
import { PUBLIC_HEADERS } from './cache.ts';
import { sendRepresentation } from './send.ts';
import { strongEtag } from './etag.ts';
import { MEDIA_TYPES } from './media-types.ts';

const encoder = new TextEncoder();

/** A JSON answer with a strong ETag from its bytes, so identical answers revalidate everywhere. */
export function sendJson(event: H3Event, value: unknown, cacheControl: string) {
  return sendDocument(event, JSON.stringify(value), MEDIA_TYPES.json, cacheControl);
}

/** A text document (JSON, an Atom feed) with a strong ETag from its bytes. */
export function sendDocument(event: H3Event, text: string, contentType: string, cacheControl: string) {
  const bytes = encoder.encode(text);
  return sendRepresentation(event, {
    status: 200,
    headers: {
      'content-type': contentType,
      'cache-control': cacheControl,
      etag: strongEtag(bytes),
      ...PUBLIC_HEADERS,
    },
    size: bytes.length,
    body: bytes,
  });
}

/**
 * 415 unless the body is declared JSON (`application/json`, or a `+json` type). A cross-site form
 * or fetch may send `text/plain` without a CORS preflight; a JSON type needs one.
 */
export function requireJsonType(event: H3Event, message: string): void {
  const type = event.req.headers.get('content-type') ?? '';
  if (!/^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i.test(type)) throw new HTTPError({ status: 415, message });
}

/** The most a JSON request body may hold: a few fields (and a changelog of 64 KiB, which escaping can double). */
const MAX_JSON_BODY_BYTES = 256 * 1024;

/**
 * A request's JSON body, never read past MAX_JSON_BODY_BYTES: 413 from the Content-Length, or while
 * streaming a body without one (the rest is left unread, so the connection is closed rather than
 * reused); 400 for one that is not JSON, `shape` naming what is expected.
 */
export async function readJsonBody(event: H3Event, shape: string): Promise<unknown> {
  let text: string;
  try {
    assertBodySize(event, MAX_JSON_BODY_BYTES);
    text = await event.req.text();
  } catch (error) {
    if (!HTTPError.isError(error) || error.status !== 413) throw error;
    throw new HTTPError({
      status: 413,
      message: `body must be at most ${MAX_JSON_BODY_BYTES} bytes`,
      headers: { connection: 'close' },
    });
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new HTTPError({ status: 400, message: `body must be JSON: ${shape}` });
  }
}

/** How many of a body's issues its 400 names: a thousand bad hashes need not be a thousand lines. */
const ISSUES_SHOWN = 5;

/**
 * readJsonBody checked by `schema`: the parsed value, else one 400 for every JSON route, naming
 * each field at fault (`days: must be an integer from 1 to 365`); with `namesField`, the first one
 * also as the error's `field` (the publishing API's errors carry it).
 */
export async function readValidatedJsonBody<T extends z.ZodType>(
  event: H3Event,
  schema: T,
  shape: string,
  { namesField = false }: { namesField?: boolean } = {},
): Promise<z.infer<T>> {
  const parsed = schema.safeParse(await readJsonBody(event, shape));
  if (parsed.success) return parsed.data;
  const { issues } = parsed.error;
  throw new HTTPError({
    status: 400,
    message: describeIssues(issues.slice(0, ISSUES_SHOWN), 'body') + (issues.length > ISSUES_SHOWN ? '; ...' : ''),
    ...(namesField && { data: { field: String(issues[0]!.path[0] ?? 'body') } }),
  });
}
