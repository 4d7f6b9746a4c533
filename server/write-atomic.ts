import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

let written = 0;

/**
 * Writes a file so that a crash leaves either the old state or the complete new file: the bytes go
 * to a temporary file beside it, are flushed to disk (fdatasync: the data and the size needed to
 * read it back), then the file is renamed into place and the folder's entry is flushed, so the
 * rename survives a power loss too. (write-file-atomic does the same plus a realpath, a stat and an
 * exit hook per write: twice the time of this on the ingestion path, measured with `npm run bench`.)
 * `mode` is the file's from its creation (less the umask), before any byte is in it: the state
 * store passes 0o600, since its records hold secrets; data/ files stay readable (0o666 less umask).
 */
export async function writeFileAtomic(
  path: string,
  bytes: Uint8Array | string,
  { mode = 0o666 }: { mode?: number } = {},
): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}-${written++}`;
  try {
    const file = await open(temporary, 'wx', mode).catch(async (error: NodeJS.ErrnoException) => {
      // Left by a killed process that had our pid: its mode and bytes are not ours to reuse.
      if (error.code !== 'EEXIST') throw error;
      await rm(temporary, { force: true });
      return open(temporary, 'wx', mode);
    });
    try {
      await file.writeFile(bytes);
      await file.datasync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/** The temporary files of writeFileAtomic, naming the writer's pid: a crash can leave one behind (sweep-leftovers.ts). */
export const TEMPORARY_FILE = /\.tmp-(\d+)-\d+$/;
