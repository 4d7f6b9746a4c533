import { open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { changelogPath, jarPath, recordPath, versionsDir } from '../server/versions/catalog.ts';
import { writeFileAtomic } from '../server/write-atomic.ts';

/**
 * A version's files changed together (a release: JAR, changelog and record; an edit: changelog and
 * record), so that a kill at any moment leaves data/ as it was or with the change whole (issue 30).
 * The record is the commit point, and an intent file written first names the change until it is
 * whole: `versions/<id>.pending` holds the record as it will be. A changelog waits beside its
 * place as `<id>.md.next` (an edit must not lose the old one before the record is written).
 * recoverInterruptedChanges, under the build lock, finishes or undoes what a kill interrupted.
 */
const intentPath = (dataDir: string, id: string) => join(versionsDir(dataDir), `${id}.pending`);
const nextChangelogPath = (dataDir: string, id: string) => `${changelogPath(dataDir, id)}.next`;

export type VersionChange = {
  id: string;
  /** The record's file as it is written: the commit point. */
  recordText: string;
  jar?: Uint8Array | undefined;
  changelog?: string | undefined;
};

/** Writes a change of one version's files: intent, JAR, changelog, record (the commit), then the changelog into place. Call under the build lock. */
export async function commitVersionChange(dataDir: string, change: VersionChange): Promise<void> {
  const { id, recordText } = change;
  const intent = intentPath(dataDir, id);
  await writeFileAtomic(intent, recordText);
  if (change.jar) await writeFileAtomic(jarPath(dataDir, id), change.jar);
  if (change.changelog !== undefined) await writeFileAtomic(nextChangelogPath(dataDir, id), change.changelog);
  await writeFileAtomic(recordPath(dataDir, id), recordText);
  await finish(dataDir, id, true);
}

/**
 * Under the build lock, before data/ is loaded: each change a kill interrupted is finished when its
 * record was written (its changelog moved into place), else undone (its waiting changelog removed,
 * and a release's JAR, which no record names). Answers the ids it recovered, for the build's log.
 */
export async function recoverInterruptedChanges(dataDir: string): Promise<{ finished: string[]; undone: string[] }> {
  const recovered = { finished: [] as string[], undone: [] as string[] };
  const names = await readdir(versionsDir(dataDir)).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.endsWith('.pending'))) {
    const id = name.slice(0, -'.pending'.length);
    const [intended, record] = await Promise.all([
      readFile(intentPath(dataDir, id), 'utf8'),
      readFile(recordPath(dataDir, id), 'utf8').catch(() => undefined),
    ]);
    const committed = record === intended;
    if (!committed && record === undefined) await rm(jarPath(dataDir, id), { force: true });
    await finish(dataDir, id, committed);
    recovered[committed ? 'finished' : 'undone'].push(id);
  }
  return recovered;
}

/** The waiting changelog moved into place (committed) or removed, then the intent removed: each step flushed before the next. */
async function finish(dataDir: string, id: string, committed: boolean): Promise<void> {
  const next = nextChangelogPath(dataDir, id);
  if (committed)
    await rename(next, changelogPath(dataDir, id)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  else await rm(next, { force: true });
  await syncFolder(dirname(next));
  await rm(intentPath(dataDir, id), { force: true });
}

async function syncFolder(path: string): Promise<void> {
  const folder = await open(path, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
