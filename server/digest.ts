import { createHash } from 'node:crypto';

/** SHA-256 as hex: file names in the tree, ETags, cache keys, token digests. */
export function sha256Hex(...parts: (Uint8Array | string)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
}
