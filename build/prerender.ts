import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { createApi } from '../server/app.ts';
import type { AppContext } from '../server/context.ts';
import { sha256Hex } from '../server/versions/catalog.ts';
import { FILES_DIR, type RouteEntry } from '../server/tree.ts';
import { ENCODINGS, ENCODING_EXTENSIONS, MIN_COMPRESSED_BYTES, compress, isCompressible, type Encoding } from '../server/http/compress.ts';

const EXTENSIONS: Record<string, string> = {
  'application/json': 'json',
  'application/java-archive': 'jar',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/svg+xml': 'svg',
};

/** Headers the static server computes per request rather than stores. */
const PER_REQUEST_HEADERS = new Set(['content-length', 'content-range']);

/**
 * Asks the same app the origin runs for each path and records status, headers and bytes. Bytes go to
 * files/<sha256>.<ext>: identical answers (a JAR behind several URLs) are stored once. Requests run a
 * few at a time (images render in parallel, bounded by the renderer); the manifest keeps path order.
 */
export async function prerender(ctx: AppContext, paths: readonly string[], progress: (done: number) => void) {
  const api = createApi(ctx);
  const treeDir = ctx.tree().dir;
  const limit = pLimit(8);
  let done = 0;
  const entries = await Promise.all(
    paths.map((path) =>
      limit(async (): Promise<[string, RouteEntry]> => {
        const response = await api.request(path);
        const bytes = new Uint8Array(await response.arrayBuffer());
        if (response.status >= 500) throw new Error(`prerender ${path}: ${response.status} ${new TextDecoder().decode(bytes)}`);
        const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
        const ext = EXTENSIONS[type];
        if (!ext) throw new Error(`prerender ${path}: unexpected content-type ${JSON.stringify(type)} (status ${response.status})`);
        const file = `${FILES_DIR}/${sha256Hex(bytes)}.${ext}`;
        const headers = Object.fromEntries([...response.headers].filter(([name]) => !PER_REQUEST_HEADERS.has(name)).sort());
        const encodings = await writeOnce(treeDir, file, bytes, isCompressible(headers['content-type']));
        progress(++done);
        return [path, { file, status: response.status, size: bytes.length, headers, ...(encodings.length > 0 ? { encodings } : {}) }];
      }),
    ),
  );
  return Object.fromEntries(entries);
}

/**
 * Writes a tree file (once: identical answers share it) and, for JSON and SVG worth compressing,
 * its br and gzip forms beside it at the strongest settings. Returns the codings kept.
 */
async function writeOnce(treeDir: string, file: string, bytes: Uint8Array, compressible: boolean): Promise<Encoding[]> {
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
  return encodings;
}
