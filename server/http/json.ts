import type { H3Event } from 'h3';
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
