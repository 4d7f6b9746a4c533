import { access } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ENCODINGS,
  ENCODING_EXTENSIONS,
  MIN_COMPRESSED_BYTES,
  compressInBackground,
  type Encoding,
} from '../server/http/compress.ts';
import { FILES_DIR, type RouteEntry } from '../server/tree.ts';
import { sha256Hex } from '../server/digest.ts';
import { putStoreFile } from './file-store.ts';

/**
 * Stores an answer's bytes as files/<sha256>.<ext> (in the store the tree's `files` links to), once
 * however many routes or trees serve it, and, when compressible and worth it, its br and gzip forms
 * beside it at the strongest settings.
 * Returns what a manifest entry needs to find them.
 */
export async function writeTreeFile(
  treeDir: string,
  bytes: Uint8Array,
  ext: string,
  compressible: boolean,
): Promise<Pick<RouteEntry, 'file' | 'size' | 'encodings'>> {
  const file = `${FILES_DIR}/${sha256Hex(bytes)}.${ext}`;
  const variants: [string, Uint8Array][] = [[file, bytes]];
  const encodings: Encoding[] = [];
  if (compressible && bytes.length >= MIN_COMPRESSED_BYTES) {
    const encoded = await Promise.all(ENCODINGS.map((encoding) => compressInBackground(bytes, encoding)));
    ENCODINGS.forEach((encoding, i) => {
      if (encoded[i]!.length >= bytes.length) return;
      encodings.push(encoding);
      variants.push([`${file}.${ENCODING_EXTENSIONS[encoding]}`, encoded[i]!]);
    });
  }
  for (const [name, content] of variants) {
    const target = join(treeDir, name);
    if (
      !(await access(target).then(
        () => true,
        () => false,
      ))
    )
      await putStoreFile(target, content);
  }
  return { file, size: bytes.length, ...(encodings.length > 0 ? { encodings } : {}) };
}
