import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import Negotiator from 'negotiator';

/** Content codings we send, best first: brotli wins ties. */
export const ENCODINGS = ['br', 'gzip'] as const;
export type Encoding = (typeof ENCODINGS)[number];

/** Files of precomputed encodings sit beside the identity file, as nginx's gzip_static expects. */
export const ENCODING_EXTENSIONS: Record<Encoding, string> = { br: 'br', gzip: 'gz' };

/** Below this, compression saves too little to be worth a second representation (nginx, express use 1 KB too). */
export const MIN_COMPRESSED_BYTES = 1024;

const COMPRESSIBLE_TYPES =
  /^(?:application\/json|application\/atom\+xml|image\/svg\+xml|text\/html|text\/css|text\/javascript|text\/csv)\b/;

/** JSON, SVG and the site's text come in br, gzip or identity, chosen by Accept-Encoding: their answers Vary on it. */
export function isCompressible(contentType: string | undefined): boolean {
  return contentType !== undefined && COMPRESSIBLE_TYPES.test(contentType);
}

/** The client's preferred coding among `available` (q-values honoured), or undefined for identity. */
export function chooseEncoding(
  acceptEncoding: string | undefined,
  available: readonly Encoding[],
): Encoding | undefined {
  if (!acceptEncoding || available.length === 0) return undefined;
  const negotiator = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } });
  // negotiator 1.x takes `preferred` (ties go to brotli); @types/negotiator still describes 0.6.
  const encoding = negotiator.encoding as (available: string[], options: { preferred: string[] }) => string | undefined;
  return encoding.call(negotiator, [...available], { preferred: [...ENCODINGS] }) as Encoding | undefined;
}

/**
 * Brotli at quality 5 everywhere: quality 11 saves 8-10% of the bytes of quality 5 for 40 to 100
 * times the time (a 10 KB list: 9.4 ms against 0.2 ms; a 780 KB list: 1.2 s against 13 ms), and
 * quality 9 saves nothing over 5. The build used 11 on answers up to 4 KiB, until a release at
 * 10,000 versions asked 340 such update checks again: 7% of their bytes (578 against 540 on
 * average) for 2.2 ms each against 0.17, most of the release's prerender step (issue 32). gzip is
 * level 9 in the build, 6 for live answers, which are compressed on the request that first needs them.
 */
function zlibOptions(size: number, encoding: Encoding, effort: 'max' | 'fast') {
  if (encoding === 'gzip') return { level: effort === 'max' ? 9 : 6 };
  return {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 5,
      [constants.BROTLI_PARAM_SIZE_HINT]: size,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  };
}

/** Synchronous, for live answers (memoised per ETag by compressLive). */
function compress(bytes: Uint8Array, encoding: Encoding, effort: 'max' | 'fast'): Uint8Array {
  const options = zlibOptions(bytes.length, encoding, effort);
  return encoding === 'gzip' ? gzipSync(bytes, options) : brotliCompressSync(bytes, options);
}

/** On zlib's thread pool, for the build: several files compress at once. */
export async function compressInBackground(bytes: Uint8Array, encoding: Encoding): Promise<Uint8Array> {
  const options = zlibOptions(bytes.length, encoding, 'max');
  return encoding === 'gzip' ? gzipAsync(bytes, options) : brotliAsync(bytes, options);
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** The ETag of an encoded representation: different bytes, so a different strong validator. */
export function encodedEtag(etag: string, encoding: Encoding): string {
  return `${etag.slice(0, -1)}-${encoding}"`;
}

/** The identity ETag an encoded one was made from, so a 304 holds whichever coding the client has. */
export function identityEtag(etag: string): string {
  return etag.replace(/-(?:br|gzip)"$/, '"');
}

// Live answers are deterministic per ETag (same data, same bytes), so their compressed forms are kept.
const compressed = new LRUCache<string, Uint8Array>({
  maxSize: 32 * 1024 * 1024,
  sizeCalculation: (bytes) => Math.max(bytes.length, 1),
});

/** A live answer's bytes in `encoding`, compressed once per ETag. */
export function compressLive(bytes: Uint8Array, etag: string, encoding: Encoding): Uint8Array {
  const key = `${etag}|${encoding}`;
  let result = compressed.get(key);
  if (!result) {
    result = compress(bytes, encoding, 'fast');
    compressed.set(key, result);
  }
  return result;
}
