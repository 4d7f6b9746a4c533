import {
  ENCODINGS,
  ENCODING_EXTENSIONS,
  MIN_COMPRESSED_BYTES,
  compressInBackground,
  type Encoding,
} from '../server/http/compress.ts';
import { FILES_DIR, type RouteEntry } from '../server/tree/format.ts';
import { sha256Hex } from '../server/helpers/digest.ts';
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
  const digest = sha256Hex(bytes);
  const stored = storedTreeFile(store, digest, ext, bytes.length, compressible);
  if (stored) return stored;
  const name = `${digest}.${ext}`;
  const variants: [string, Uint8Array][] = [];
  const encodings: Encoding[] = [];
  if (compressible && bytes.length >= MIN_COMPRESSED_BYTES) {
    const encoded = await Promise.all(ENCODINGS.map((encoding) => compressInBackground(bytes, encoding)));
    ENCODINGS.forEach((encoding, i) => {
      if (encoded[i]!.length >= bytes.length) return;
      encodings.push(encoding);
      variants.push([`${name}.${ENCODING_EXTENSIONS[encoding]}`, encoded[i]!]);
    });
  }
  // The answer's own file last: its presence says its forms are stored (storedTreeFile), so another
  // route with the same bytes, prerendered meanwhile, never lists fewer forms than this one. Its
  // forms are put without asking the store first (they are these bytes' own): a lookup of a name
  // the store lacks, while the build's other writes rename into the same folder, cost a release
  // about a millisecond each at 10,000 versions.
  for (const [file, content] of variants) await store.put(file, content);
  if (!store.has(name)) await store.put(name, bytes);
  return entry(name, bytes.length, encodings);
}

/**
 * The entry of bytes of this digest already in the store with their br/gzip forms (when worth
 * having), or undefined: a prerender that knows an answer's digest from its ETag need not read it.
 */
export function storedTreeFile(
  store: FileStore,
  digest: string,
  ext: string,
  size: number,
  compressible: boolean,
): Pick<RouteEntry, 'file' | 'size' | 'encodings'> | undefined {
  const name = `${digest}.${ext}`;
  if (!store.has(name)) return undefined;
  const forms = ENCODINGS.filter((encoding) => store.has(`${name}.${ENCODING_EXTENSIONS[encoding]}`));
  if (compressible && size >= MIN_COMPRESSED_BYTES && forms.length === 0) return undefined;
  return entry(name, size, forms);
}

const entry = (name: string, size: number, encodings: Encoding[]) => ({
  file: `${FILES_DIR}/${name}`,
  size,
  ...(encodings.length > 0 ? { encodings } : {}),
});
