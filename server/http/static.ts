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
 * bytes about 0.85. Files are content-addressed, so cached bytes stay valid across tree swaps.
 */
export function serveTree(ctx: AppContext, options: StaticOptions = {}): Middleware {
  const largestInMemory = options.largestInMemory ?? 16 * 1024 * 1024;
  const memory = new LRUCache<string, Uint8Array>({
    maxSize: options.memoryBytes ?? 256 * 1024 * 1024,
    sizeCalculation: (bytes) => Math.max(bytes.length, 1),
    fetchMethod: (path) => readFile(path),
  });
  return async (event, next) => {
    const { method } = event.req;
    if (method !== 'GET' && method !== 'HEAD') return next();
    const tree = ctx.tree();
    const entry = tree.routes.get(event.url.pathname);
    if (!entry) return next();
    const path = join(tree.dir, entry.file);
    const body: Body = entry.size <= largestInMemory ? ((await memory.fetch(path)) ?? (await readFile(path))) : { path };
    return sendRepresentation(event.req, { status: entry.status, headers: entry.headers, size: entry.size, body });
  };
}
