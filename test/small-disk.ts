// A real full disk for the tests: a tmpfs of a few hundred KiB mounted on a temp folder, so a write
// meets ENOSPC (or a short write) from the kernel itself, not from a stand-in of our own I/O. CI runs
// as root on a machine that may mount; where mounting is refused the test says so and fails.
import { execFile } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type SmallDisk = { dir: string; unmount: () => Promise<void> };

/** Mounts a tmpfs of `kib` KiB on a new temp folder; unmount() removes it again. */
export async function mountSmallDisk(kib: number): Promise<SmallDisk> {
  const dir = await mkdtemp(join(tmpdir(), 'depot-small-disk-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${kib}k,mode=0700`, 'tmpfs', dir]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`cannot mount a ${kib} KiB tmpfs for the full-disk test (needs root): ${String(error)}`);
  }
  return {
    dir,
    unmount: async () => {
      await run('umount', ['-l', dir]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Fills the disk until the kernel refuses more (ENOSPC), and returns how many bytes it took. */
export async function fillDisk(dir: string): Promise<number> {
  const file = await open(join(dir, 'filler'), 'w');
  const chunk = Buffer.alloc(4096, 120);
  let total = 0;
  try {
    for (let i = 0; i < 1_000_000; i++) {
      const { bytesWritten } = await file.write(chunk);
      total += bytesWritten;
      if (bytesWritten < chunk.length) break;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    await file.close();
  }
  return total;
}
