import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';

export type FileCache = {
  /** Bytes of a tree file: synchronously when held in memory, so hot answers need no await. */
  read(treeDir: string, file: string): Uint8Array | Promise<Uint8Array>;
};

/**
 * Tree files held in memory, least recently used evicted first. Tree files are content-addressed
 * (`files/<sha256>.<ext>`), so bytes cached by file name stay valid across tree swaps.
 */
export function createFileCache(memoryBytes = 256 * 1024 * 1024): FileCache {
  const memory = new LRUCache<string, Uint8Array>({
    maxSize: memoryBytes,
    sizeCalculation: (bytes) => Math.max(bytes.length, 1),
  });
  const load = async (treeDir: string, file: string) => {
    const bytes = await readFile(join(treeDir, file));
    memory.set(file, bytes);
    return bytes;
  };
  return { read: (treeDir, file) => memory.get(file) ?? load(treeDir, file) };
}
