import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ENCODINGS, ENCODING_EXTENSIONS, MIN_COMPRESSED_BYTES, compress, type Encoding } from '../server/http/compress.ts';
import { FILES_DIR, type RouteEntry } from '../server/tree.ts';
import { sha256Hex } from '../server/versions/catalog.ts';

/**
 * Stores an answer's bytes in the tree as files/<sha256>.<ext>, once however many routes serve it,
 * and, when compressible and worth it, its br and gzip forms beside it at the strongest settings.
 * Returns what a manifest entry needs to find them.
 */
export async function writeTreeFile(treeDir: string, bytes: Uint8Array, ext: string, compressible: boolean): Promise<Pick<RouteEntry, 'file' | 'size' | 'encodings'>> {
  const file = `${FILES_DIR}/${sha256Hex(bytes)}.${ext}`;
  const variants: [string, Uint8Array][] = [[file, bytes]];
  const encodings: Encoding[] = [];
  if (compressible && bytes.length >= MIN_COMPRESSED_BYTES) {
    for (const encoding of ENCODINGS) {
      const encoded = compress(bytes, encoding, 'max');
      if (encoded.length >= bytes.length) continue;
      encodings.push(encoding);
      variants.push([`${file}.${ENCODING_EXTENSIONS[encoding]}`, encoded]);
    }
  }
  for (const [name, content] of variants) {
    const target = join(treeDir, name);
    if (!(await access(target).then(() => true, () => false))) await writeFile(target, content);
  }
  return { file, size: bytes.length, ...(encodings.length > 0 ? { encodings } : {}) };
}
