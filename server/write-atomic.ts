import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import writeFileAtomicWhole from 'write-file-atomic';

/**
 * Writes a file so that a crash leaves either the old state or the complete new file:
 * write-file-atomic writes a temporary file beside it, flushes it and renames it into place (and
 * queues writes to one path in this process); then the folder's entry is flushed too, so the
 * rename itself survives a power loss.
 */
export async function writeFileAtomic(path: string, bytes: Uint8Array | string): Promise<void> {
  await writeFileAtomicWhole(path, typeof bytes === 'string' ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { fsync: true });
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/** write-file-atomic's temporary files are `<name>.<digits>`; a crash can leave one behind. */
export const TEMPORARY_FILE = /\.\d+$/;
