import {
  ENCODINGS,
  ENCODING_EXTENSIONS,
  MIN_COMPRESSED_BYTES,
  compressInBackground,
  type Encoding,
} from '../server/http/compress.ts';
import { FILES_DIR, type RouteEntry } from '../server/tree.ts';
import { sha256Hex } from '../server/digest.ts';
import type { FileStore } from './file-store.ts';

/**
 * Stores an answer's bytes as files/<sha256>.<ext> in dist/'s store, once however many routes or
 * trees serve it, and, when compressible and worth it, its br and gzip forms beside it at the
 * strongest settings. Bytes already stored with their forms (an answer that did not change) are
 * not compressed again. Returns what a manifest entry needs to find them.
 */
export async function writeTreeFile(
  store: FileStore,
  bytes: Uint8Array,
  ext: string,
  compressible: boolean,
): Promise<Pick<RouteEntry, 'file' | 'size' | 'encodings'>> {
  const name = `${sha256Hex(bytes)}.${ext}`;
  const entry = (encodings: Encoding[]) => ({
    file: `${FILES_DIR}/${name}`,
    size: bytes.length,
    ...(encodings.length > 0 ? { encodings } : {}),
  });
  const worthCompressing = compressible && bytes.length >= MIN_COMPRESSED_BYTES;
  const storedForms = ENCODINGS.filter((encoding) => store.has(`${name}.${ENCODING_EXTENSIONS[encoding]}`));
  if (store.has(name) && (!worthCompressing || storedForms.length > 0)) return entry(storedForms);
  const variants: [string, Uint8Array][] = [[name, bytes]];
  const encodings: Encoding[] = [];
  if (worthCompressing) {
    const encoded = await Promise.all(ENCODINGS.map((encoding) => compressInBackground(bytes, encoding)));
    ENCODINGS.forEach((encoding, i) => {
      if (encoded[i]!.length >= bytes.length) return;
      encodings.push(encoding);
      variants.push([`${name}.${ENCODING_EXTENSIONS[encoding]}`, encoded[i]!]);
    });
  }
  for (const [file, content] of variants) if (!store.has(file)) await store.put(file, content);
  return entry(encodings);
}
