import { mkdir, open, rm, truncate } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Storage } from '../storage.ts';

/**
 * An append-only text record (ASCII lines): a write costs what it adds, not what the record holds.
 * Read from an offset, so a reader that keeps its place reads only what others appended since.
 */
export type Journal = {
  /** The text from `offset` (characters, which are bytes: ASCII) to the end; '' when absent. */
  readFrom(key: string, offset: number): Promise<string>;
  /** Appends `text`; it is on disk (fdatasync) when this resolves. */
  append(key: string, text: string): Promise<void>;
  /** Cuts the record to `length`: a torn last line left by a killed writer. */
  truncate(key: string, length: number): Promise<void>;
  remove(key: string): Promise<void>;
};

/** The embedded store's folder, when `key` lives in files (createFileStorage); undefined for memory and Redis. */
function folderOf(storage: Storage, key: string): string | undefined {
  const { driver } = storage.getMount(key);
  return driver.name === 'atomic-fs' ? (driver.options as { base: string }).base : undefined;
}

/** Files beside the store's records (`a:b:c` -> `<base>/a/b/c`) when the store is files; else the store's raw values (memory: one process). */
export function journalOf(storage: Storage, key: string): Journal {
  const base = folderOf(storage, key);
  return base ? fileJournal(base) : storedJournal(storage);
}

function fileJournal(base: string): Journal {
  const pathOf = (key: string) => join(base, ...key.split(':'));
  return {
    async readFrom(key, offset) {
      const file = await open(pathOf(key), 'r').catch((error: NodeJS.ErrnoException) =>
        error.code === 'ENOENT' ? undefined : Promise.reject(error),
      );
      if (!file) return '';
      try {
        const { size } = await file.stat();
        const buffer = Buffer.alloc(Math.max(size - offset, 0));
        let filled = 0;
        while (filled < buffer.length) {
          const { bytesRead } = await file.read(buffer, filled, buffer.length - filled, offset + filled);
          if (bytesRead === 0) break;
          filled += bytesRead;
        }
        return buffer.toString('latin1', 0, filled);
      } finally {
        await file.close();
      }
    },
    async append(key, text) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      const file = await open(path, 'a');
      let created: boolean;
      try {
        created = (await file.stat()).size === 0;
        await file.write(text);
        await file.datasync();
      } finally {
        await file.close();
      }
      // A new file's name must survive a power loss too.
      if (created) {
        const folder = await open(dirname(path), 'r');
        await folder.sync().finally(() => folder.close());
      }
    },
    truncate: (key, length) => truncate(pathOf(key), length),
    remove: (key) => rm(pathOf(key), { force: true }),
  };
}

function storedJournal(storage: Storage): Journal {
  const text = async (key: string) => String((await storage.getItemRaw(key)) ?? '');
  return {
    readFrom: async (key, offset) => (await text(key)).slice(offset),
    append: async (key, added) => storage.setItemRaw(key, (await text(key)) + added),
    truncate: async (key, length) => storage.setItemRaw(key, (await text(key)).slice(0, length)),
    remove: (key) => storage.removeItem(key),
  };
}
