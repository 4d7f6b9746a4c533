import { join } from 'node:path';
import type { H3Event, Middleware } from 'h3';
import type { RouteEntry } from './format.ts';
import type { Tree } from './open.ts';
import type { FileCache } from '../http/file-cache.ts';
import { ENCODING_EXTENSIONS, chooseEncoding, type Encoding } from '../http/compress.ts';
import { requestHeader, sendRepresentation, type Body } from '../http/send.ts';

/** What serving the tree needs: the tree of the moment, the file cache, IMAGE_CACHE=off, and the download counter. */
export type TreeSource = {
  tree: () => Tree;
  files: FileCache;
  renderAlways?: boolean | undefined;
  /** The download counter (downloads/counter.ts): a precomputed JAR answer is counted once sent. */
  downloads?: { countTreeAnswer: (event: H3Event, pathname: string, entry: RouteEntry) => void };
};

/** Larger files are streamed from disk on every request instead of held in memory. */
const LARGEST_IN_MEMORY = 16 * 1024 * 1024;

/**
 * Serves the current tree's manifest routes: exact path and query string (the manifest lists the
 * brand images' query forms the site writes), GET and HEAD. Small answers come from memory: h3
 * answering from a file stream reaches about a third of node:http's requests/s, from bytes about
 * 0.85. Any other query string goes to the live routes, which answer the API's query forms from the
 * same files when they were precomputed.
 */
export function serveTree(ctx: TreeSource): Middleware {
  // Synchronous when the bytes are in memory: an await per request costs a fifth of the throughput.
  return (event, next) => {
    const { method } = event.req;
    if (method !== 'GET' && method !== 'HEAD') return next();
    const tree = ctx.tree();
    const { pathname, search } = event.url;
    // IMAGE_CACHE=off: every brand query renders (benchmarks), precomputed query forms included.
    if (search !== '' && ctx.renderAlways) return next();
    const entry = tree.routes.get(search === '' ? pathname : pathname + search);
    if (!entry) return next();
    // Most downloads are answered here, from the tree: counted once sent, off the answer's path.
    ctx.downloads?.countTreeAnswer(event, pathname, entry);
    return sendTreeEntry(ctx.files, tree, event, entry);
  };
}

/** Answers with one of the tree's files, as its manifest entry says (the site's pages also reuse them). */
export function sendTreeEntry(files: FileCache, tree: Tree, event: H3Event, entry: RouteEntry) {
  event.context.answeredFrom = 'precomputed';
  if (entry.size > LARGEST_IN_MEMORY) return send(event, entry, { path: join(tree.dir, entry.file) }, undefined);
  // JSON and SVG files have their br and gzip forms beside them, compressed at build time.
  const encoding = entry.encodings
    ? chooseEncoding(requestHeader(event.req, 'accept-encoding'), entry.encodings)
    : undefined;
  const bytes = files.read(tree.dir, encoding ? `${entry.file}.${ENCODING_EXTENSIONS[encoding]}` : entry.file);
  return bytes instanceof Uint8Array
    ? send(event, entry, bytes, encoding)
    : bytes.then((loaded) => send(event, entry, loaded, encoding));
}

function send(event: H3Event, entry: RouteEntry, body: Body, encoding: Encoding | undefined) {
  const size = body instanceof Uint8Array ? body.length : entry.size;
  return sendRepresentation(event, {
    status: entry.status,
    headers: entry.headers,
    size,
    body,
    encoding: encoding ?? 'identity',
  });
}
