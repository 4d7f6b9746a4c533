import type { FileHandle } from 'node:fs/promises';
import { mkdir, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { lock } from 'proper-lockfile';
import { PRIVATE_FOLDER, PRIVATE_LOCK_FS, filesFolderOf, type Storage } from '../../storage.ts';
import {
  appendAll,
  createSegment,
  holdSamples,
  journalLine,
  leftSegments,
  readSegment,
  type Segment,
} from './journal-segment.ts';
import { throttledLog } from '../../helpers/throttled-log.ts';
import { foldIntoDay } from './file.ts';
import { RETENTION_DAYS, dayKey, readRange, type Sample, type SampleStore } from './contract.ts';
import type { Log } from '../../helpers/log.ts';

/** The journal's folder under STORAGE_DIR. */
export const JOURNAL_FOLDER = 'samples-journal';
/** How often the segment being appended to is sealed and folded into the stored days. */
const FOLD_EVERY_MS = 500;
/**
 * Below this much free space the journal refuses samples as a full disk (503): the days they go to
 * need room to be written, and an append that fits in its file's last block would otherwise pass.
 */
const FREE_SPACE_RESERVE = 64 * 1024;
/** Days folded at once. */
const FOLD_CONCURRENCY = 8;

type Waiting = { serverId: string; samples: readonly Sample[]; done: (error?: unknown) => void };

export type JournaledSampleStore = SampleStore & {
  /** Folds what is journaled (what cannot be folded stays for the next start), then lets go of the journal. */
  close(): Promise<void>;
};

/**
 * The origin's samples on the embedded store, with a group commit across servers: every `add`
 * waiting at a moment goes into the journal in one append and one fdatasync, and each resolves
 * once that is on disk. Every FOLD_EVERY_MS the segment being appended to is sealed and its samples
 * are folded into the stored (server, day) files in the background, one write per day whatever
 * the number of servers that posted, under the day's lock as the CLI writes; then the segment is
 * removed. Ranges merge the samples not folded yet.
 *
 * Folding is idempotent: a day written from a segment names it (`folded`, contract.ts) in
 * the same atomic write, so a crash between folding a day and removing the segment replays the
 * segment at the next start without counting that day's samples twice. A day names only
 * segments still on disk, so the list stays short. Ranges use the same names: a segment's samples
 * are merged into a day only while the day does not name it.
 *
 * One origin at a time owns the journal (a lock beside it); null when another does or the store is
 * not files, and the caller stores days directly as before.
 */
export async function openJournaledSampleStore(
  storage: Storage,
  log: Log,
  now: () => number = Date.now,
): Promise<JournaledSampleStore | null> {
  const base = filesFolderOf(storage);
  if (!base) return null;
  const dir = join(base, JOURNAL_FOLDER);
  await mkdir(dir, { recursive: true, mode: PRIVATE_FOLDER });
  // A killed owner's lock is taken over once stale (2 s): a restart right after a kill waits for it.
  const release = await lock(dir, {
    realpath: false,
    fs: PRIVATE_LOCK_FS,
    stale: 2000,
    retries: { retries: 40, minTimeout: 100, maxTimeout: 100 },
    onCompromised: (error) => log.warn(`[samples] lock on the journal lost: ${error.message}`),
  }).catch((error: NodeJS.ErrnoException) => (error.code === 'ELOCKED' ? null : Promise.reject(error)));
  if (!release) {
    log.warn(`[samples] another origin holds the journal in ${dir}: this one writes each sample's day directly`);
    return null;
  }
  const journal = createJournal(storage, dir, log, now);
  // What a previous process journaled and did not fold (killed, or its disk full) is folded before any answer.
  for (const left of await leftSegments(dir)) journal.sealed.push(await readSegment(left, log));
  await journal.foldSealed();
  const timer = setInterval(() => void journal.foldNow().catch(() => {}), FOLD_EVERY_MS);
  timer.unref();
  return {
    add: (serverId, samples) => journal.add(serverId, samples),
    range: (serverId, from, to) => readRange(storage, serverId, from, to, journal.unfoldedOf(serverId)),
    async close() {
      clearInterval(timer);
      // A timed fold may be running, its segment sealed before the last samples came: it is awaited
      // (foldNow returns it), then one more fold seals and folds what came after it.
      await journal.foldNow().catch(() => {});
      await journal.foldNow().catch((error: unknown) => {
        log.warn(`[samples] could not fold the journal at stop (folded at the next start): ${String(error)}`);
      });
      await release().catch(() => {});
    },
  };
}

/** What the journal's steps share: the segment being appended to, the sealed ones, and whose turn it is. */
type JournalState = {
  current: { segment: Segment; file: FileHandle; size: number } | null;
  sealed: Segment[];
  /** Appends and sealing take turns: a segment is sealed only between appends, never during one. */
  inTurn: <T>(step: () => Promise<T>) => Promise<T>;
};

/** The journal's state and its steps: appending (group commit), sealing, folding. */
function createJournal(storage: Storage, dir: string, log: Log, now: () => number) {
  const warnFoldFailed = throttledLog((line) => log.warn(line));
  let turn: Promise<unknown> = Promise.resolve();
  const state: JournalState = {
    current: null,
    sealed: [],
    inTurn: (step) => {
      const result = turn.then(step);
      turn = result.catch(() => {});
      return result;
    },
  };
  const foldSealed = () => foldSealedSegments(state, storage, log);
  let folding: Promise<void> | null = null;
  return {
    sealed: state.sealed,
    foldSealed,
    add: groupCommit(state, dir, now),
    /** Seals the current segment and folds every sealed one; one fold at a time. */
    foldNow(): Promise<void> {
      folding ??= state
        .inTurn(() => sealCurrent(state))
        .then(foldSealed)
        .catch((error: unknown) => {
          warnFoldFailed(
            `[samples] could not fold the journal yet, tried again shortly (said once a minute): ${error}`,
          );
          throw error;
        })
        .finally(() => (folding = null));
      return folding;
    },
    unfoldedOf: (serverId: string) => unfoldedSamples(state, serverId),
  };
}

/**
 * The journal's `add`, resolved once its samples' line is on disk: every add that waits while an
 * append runs goes into the next one, one append and one fdatasync for all of them.
 */
function groupCommit(state: JournalState, dir: string, now: () => number) {
  const waiting: Waiting[] = [];
  let appending = false;

  /** Appends every waiting line at once, until none wait. */
  async function drain() {
    appending = true;
    while (waiting.length > 0) {
      const group = waiting.splice(0);
      await state
        .inTurn(() => appendGroup(state, dir, now, group))
        .then(
          () => group.forEach((entry) => entry.done()),
          (error: unknown) => group.forEach((entry) => entry.done(error ?? new Error('append failed'))),
        );
    }
    appending = false;
  }

  return (serverId: string, samples: readonly Sample[]): Promise<void> => {
    const done = new Promise<void>((resolve, reject) =>
      waiting.push({ serverId, samples, done: (error) => (error ? reject(error) : resolve()) }),
    );
    if (!appending) void drain();
    return done;
  };
}

/** One group's lines in one append and one fdatasync, to the current segment (a new one if none is open). */
async function appendGroup(state: JournalState, dir: string, now: () => number, group: Waiting[]) {
  const free = await statfs(dir);
  if (free.bavail * free.bsize < FREE_SPACE_RESERVE)
    throw Object.assign(new Error('no space left for the player-count journal'), { code: 'ENOSPC' });
  const current = (state.current ??= { ...(await createSegment(dir, now())), size: 0 });
  const { segment, file, size: before } = current;
  const bytes = Buffer.from(group.map((entry) => journalLine(entry.serverId, entry.samples)).join(''));
  try {
    await appendAll(file, bytes);
    await file.datasync();
    current.size += bytes.length;
  } catch (error) {
    // Part of the text may be on disk: cut it off so the next line starts on its own; if even
    // that fails, the next append goes to a new segment (a replay skips this one's torn end).
    await file.truncate(before).catch(() => sealCurrent(state));
    throw error;
  }
  for (const entry of group) holdSamples(segment, entry.serverId, entry.samples);
}

/** The segment being appended to goes to the ones to fold; the next append starts a new one. */
async function sealCurrent(state: JournalState) {
  if (!state.current) return;
  const { segment, file } = state.current;
  state.current = null;
  // Among the sealed ones before anything is awaited: a chart read while the file closes still
  // merges its samples (they were answered 204 already).
  if (segment.count > 0) state.sealed.push(segment);
  await file.close().catch(() => {});
  if (segment.count === 0) await rm(segment.path, { force: true });
}

/** Folds the sealed segments, oldest first; each is removed once all its days hold it. */
async function foldSealedSegments(state: JournalState, storage: Storage, log: Log) {
  const { sealed } = state;
  const limit = pLimit(FOLD_CONCURRENCY);
  while (sealed.length > 0) {
    const segment = sealed[0]!;
    const live = new Set([...sealed.map((s) => s.id), ...(state.current ? [state.current.segment.id] : [])]);
    const days = [...segment.held].flatMap(([serverId, byDay]) =>
      [...byDay].map(([day, samples]) => ({ serverId, day, samples })),
    );
    await Promise.all(
      days.map(({ serverId, day, samples }) =>
        limit(() =>
          foldIntoDay(storage, dayKey(serverId, day), dayKey(serverId, day - RETENTION_DAYS - 1), samples, log, {
            id: segment.id,
            live,
          }),
        ),
      ),
    );
    await rm(segment.path, { force: true });
    sealed.shift();
  }
}

/** The server's journaled samples of a day that the stored day does not hold yet. */
function unfoldedSamples(state: JournalState, serverId: string) {
  // Taken now, before the days are read: a segment folded meanwhile is named by the day it reaches.
  const segments = [...state.sealed, ...(state.current ? [state.current.segment] : [])].map((s) => ({
    id: s.id,
    byDay: s.held.get(serverId),
  }));
  return (day: number, folded: readonly string[]) =>
    segments.flatMap(({ id, byDay }) => (folded.includes(id) ? [] : (byDay?.get(day) ?? [])));
}
