import { sha256Hex } from '../helpers/digest.ts';

/** Our strong ETag: the sha256 of the bytes, quoted. */
export function strongEtag(bytes: Uint8Array | string): string {
  return `"${sha256Hex(bytes)}"`;
}

/** The sha256 a strong ETag of ours names (strongEtag, or a JAR's `"<sha256>"`), if it is one. */
export function etagDigest(etag: string | undefined): string | undefined {
  return /^"([0-9a-f]{64})"$/.exec(etag ?? '')?.[1];
}
