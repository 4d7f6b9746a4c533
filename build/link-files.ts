import { link } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { ENCODING_EXTENSIONS } from '../server/http/compress.ts';
import type { RouteEntry } from '../server/tree.ts';
import { allOrFirstError } from '../server/settle.ts';

/** A route's file and its br/gzip forms, as a manifest entry names them. */
export function routeFiles(entry: RouteEntry): string[] {
  return [entry.file, ...(entry.encodings ?? []).map((encoding) => `${entry.file}.${ENCODING_EXTENSIONS[encoding]}`)];
}

/**
 * Hard-links a route's files from one tree into another (trees are never written once swapped in,
 * so sharing their files is safe). A file already there (the same bytes: names are digests) is kept.
 */
export async function linkRouteFiles(fromDir: string, toDir: string, entry: RouteEntry): Promise<void> {
  for (const file of routeFiles(entry)) {
    await link(join(fromDir, file), join(toDir, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
}

/** linkRouteFiles for many routes: each file once (routes share files), a few at a time. */
export async function linkRoutesFiles(fromDir: string, toDir: string, entries: Iterable<RouteEntry>): Promise<void> {
  const unique = new Map<string, RouteEntry>();
  for (const entry of entries) unique.set(routeFiles(entry).join(' '), entry);
  const limit = pLimit(8);
  await allOrFirstError([...unique.values()].map((entry) => limit(() => linkRouteFiles(fromDir, toDir, entry))));
}
