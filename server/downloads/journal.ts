import { mkdir, open, rm, stat, truncate, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PRIVATE_FILE, PRIVATE_FOLDER, type Storage } from '../storage.ts';
import { writeFileAtomic } from '../write-atomic.ts';

/** What a journal holds from an offset, and which file that was (a replaced file is read again from its start). */
type JournalText = {
  text: string;
  /** The file's identity (device and inode) while it is the same file; undefined when absent. */
  file: string | undefined;
};

/**
 * An append-only text record (ASCII lines): a write costs what it adds, not what the record holds.
 * Read from an offset, so a reader that keeps its place reads only what others appended since.
 */
export type Journal = {
  /** The text from `offset` (characters, which are bytes: ASCII) to the end; '' when absent. */
  readFrom(key: string, offset: number): Promise<JournalText>;
  /**
   * Appends `text` whole or not at all: it is on disk (fdatasync) when this resolves; when it
   * throws (a full disk: ENOSPC, or a short write), the record is cut back to what it held before.
   */
  append(key: string, text: string): Promise<void>;
  /** The record's length (characters, which are bytes: ASCII); 0 when absent. */
  size(key: string): Promise<number>;
  /** Cuts the record to `length`: a torn last line left by a killed writer. */
  truncate(key: string, length: number): Promise<void>;
  /** Replaces the whole record at once (a crash leaves the old or the new one): `counts repair`. */
  replace(key: string, text: string): Promise<void>;
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

/** Writes every byte of `bytes`: a write may take less than asked (a disk about to fill) without an error. */
async function writeAll(file: FileHandle, bytes: Buffer): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await file.write(bytes, written, bytes.length - written);
    // No progress and no error: a full disk said so without ENOSPC; fail rather than spin.
    if (bytesWritten === 0) throw Object.assign(new Error('no space left to append'), { code: 'ENOSPC' });
    written += bytesWritten;
  }
}

function fileJournal(base: string): Journal {
  const pathOf = (key: string) => join(base, ...key.split(':'));
  return {
    async readFrom(key, offset) {
      const file = await open(pathOf(key), 'r').catch((error: NodeJS.ErrnoException) =>
        error.code === 'ENOENT' ? undefined : Promise.reject(error),
      );
      if (!file) return { text: '', file: undefined };
      try {
        const { size, dev, ino } = await file.stat();
        const buffer = Buffer.alloc(Math.max(size - offset, 0));
        let filled = 0;
        while (filled < buffer.length) {
          const { bytesRead } = await file.read(buffer, filled, buffer.length - filled, offset + filled);
          if (bytesRead === 0) break;
          filled += bytesRead;
        }
        return { text: buffer.toString('latin1', 0, filled), file: `${dev}:${ino}` };
      } finally {
        await file.close();
      }
    },
    async append(key, text) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true, mode: PRIVATE_FOLDER });
      const file = await open(path, 'a', PRIVATE_FILE);
      let before = 0;
      try {
        // The caller holds the day's lock: nobody else appends between this size and the write.
        before = (await file.stat()).size;
        await writeAll(file, Buffer.from(text, 'latin1'));
        await file.datasync();
      } catch (error) {
        // Part of the text may be in the file (a short write before ENOSPC): cut it off, so the
        // next append starts on a line of its own and readers never meet half a line mid-file.
        await file
          .truncate(before)
          .then(() => file.datasync())
          .catch(() => {});
        throw error;
      } finally {
        await file.close();
      }
      // A new file's name must survive a power loss too.
      if (before === 0) {
        const folder = await open(dirname(path), 'r');
        await folder.sync().finally(() => folder.close());
      }
    },
    size: (key) =>
      stat(pathOf(key)).then(
        (found) => found.size,
        (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? 0 : Promise.reject(error)),
      ),
    truncate: (key, length) => truncate(pathOf(key), length),
    replace: (key, text) => writeFileAtomic(pathOf(key), Buffer.from(text, 'latin1'), { mode: PRIVATE_FILE }),
    remove: (key) => rm(pathOf(key), { force: true }),
  };
}

function storedJournal(storage: Storage): Journal {
  const text = async (key: string) => String((await storage.getItemRaw(key)) ?? '');
  return {
    readFrom: async (key, offset) => {
      const held = await storage.getItemRaw(key);
      // One process holds a memory store: the record is never replaced under a reader.
      const absent = held === null || held === undefined;
      return { text: absent ? '' : String(held).slice(offset), file: absent ? undefined : 'stored' };
    },
    append: async (key, added) => storage.setItemRaw(key, (await text(key)) + added),
    size: async (key) => (await text(key)).length,
    truncate: async (key, length) => storage.setItemRaw(key, (await text(key)).slice(0, length)),
    replace: (key, whole) => storage.setItemRaw(key, whole),
    remove: (key) => storage.removeItem(key),
  };
}
