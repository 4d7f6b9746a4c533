import { createStorage, type Storage } from 'unstorage';
import fsLiteDriver from 'unstorage/drivers/fs-lite';
import memoryDriver from 'unstorage/drivers/memory';

export type { Storage };

/** All state goes through unstorage: files under `dir` (the embedded default), or memory for tests. */
export function createFileStorage(dir: string): Storage {
  return createStorage({ driver: fsLiteDriver({ base: dir }) });
}

export function createMemoryStorage(): Storage {
  return createStorage({ driver: memoryDriver() });
}
