import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Middleware } from 'h3';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../context.ts';
import { sendRepresentation, type Body } from './send.ts';

export type StaticOptions = {
  /** Bytes of files held in memory, least recently used evicted first. */
  memoryBytes?: number;
  /** Larger files are streamed from disk on every request. */
  largestInMemory?: number;
};

/**
 * Serves the current tree's manifest routes, exact path match, GET and HEAD. Small answers come from
 * memory: h3 answering from a file stream reaches about a third of node:http's requests/s, from
 * bytes about 0.85. Files are content-addressed, so bytes cached by file name stay valid across
 * tree swaps.
 */
export function serveTree(ctx: AppContext, options: StaticOptions = {}): Middleware {
  const largestInMemory = options.largestInMemory ?? 16 * 1024 * 1024;
  const memory = new LRUCache<string, Uint8Array>({
    maxSize: options.memoryBytes ?? 256 * 1024 * 1024,
    sizeCalculation: (bytes) => Math.max(bytes.length, 1),
  });
  const load = async (dir: string, file: string) => {
    const bytes = await readFile(join(dir, file));
    memory.set(file, bytes);
    return bytes;
  };
  // Synchronous when the bytes are in memory: an await per request costs a fifth of the throughput.
  return (event, next) => {
    const { method } = event.req;
    if (method !== 'GET' && method !== 'HEAD') return next();
    const tree = ctx.tree();
    const entry = tree.routes.get(event.url.pathname);
    if (!entry) return next();
    const send = (body: Body) => sendRepresentation(event.req, { status: entry.status, headers: entry.headers, size: entry.size, body });
    if (entry.size > largestInMemory) return send({ path: join(tree.dir, entry.file) });
    const bytes = memory.get(entry.file);
    return bytes ? send(bytes) : load(tree.dir, entry.file).then(send);
  };
}
