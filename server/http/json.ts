import type { H3Event } from 'h3';
import { PUBLIC_HEADERS } from './cache.ts';
import { sendRepresentation, strongEtag } from './send.ts';
import { MEDIA_TYPES } from './media-types.ts';

const encoder = new TextEncoder();

/** A JSON answer with a strong ETag from its bytes, so identical answers revalidate everywhere. */
export function sendJson(event: H3Event, value: unknown, cacheControl: string) {
  const bytes = encoder.encode(JSON.stringify(value));
  return sendRepresentation(event, {
    status: 200,
    headers: {
      'content-type': MEDIA_TYPES.json,
      'cache-control': cacheControl,
      etag: strongEtag(bytes),
      ...PUBLIC_HEADERS,
    },
    size: bytes.length,
    body: bytes,
  });
}
