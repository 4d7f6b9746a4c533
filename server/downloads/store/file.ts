import type { Log } from '../../helpers/log.ts';
import { withKeyLock, type Storage } from '../../storage.ts';
import type { Counted } from '../counted.ts';
import { digestHex } from '../digest-set.ts';
import { journalOf, type Journal } from '../journal.ts';
import { readJournalLines } from '../journal-lines.ts';
import { SeenClients } from '../seen-clients.ts';
import {
  DAYS_KEY,
  DayCounts,
  countedDays,
  countsKey,
  dayCountsOf,
  isCountable,
  journalKey,
  parsedOr,
  type DayCount,
  type DayCounter,
} from './contract.ts';

/** What this process has read of a day that may still be counted: its journal up to `offset`, in the file `file`. */
type OpenDay = { offset: number; file: string | undefined; seen: SeenClients };

/** The file backend's state in this process; every function below takes it. */
type FileDays = {
  storage: Storage;
  journal: Journal;
  exactClients: number;
  log: Log;
  /** Days that can no longer change, parsed once: never read again. */
  closed: Map<number, DayCount[]>;
  open: Map<number, OpenDay>;
  /** Days this process has seen listed in DAYS_KEY. */
  listed: Set<number>;
  /** Journal files whose malformed lines were said (once per file). */
  warned: Set<string>;
  /** One piece of work at a time per day in this process (their reads of a journal would overlap). */
  queues: Map<number, Promise<unknown>>;
};

/**
 * Download counts in the embedded store (files; memory in tests). A day that may still be counted
 * (SEEN_DAYS) is a journal, one line per counted download (its seen digest and field), appended
 * whole (or cut back) and fdatasync'ed under the day's file lock: a flush writes its batch alone,
 * a crash tears at most the last line, which readers skip and the next writer cuts off; a
 * malformed line (a torn append of older versions) is skipped and said. Each process keeps what
 * it has read of a journal and reads only what was appended since (by the CLI, or another origin),
 * from its start again when the file was replaced (`counts repair`). Once a day can no longer be
 * counted it is closed: its counts are written to one record (atomically), the journal removed,
 * and the record read and parsed once per process.
 */
export function fileDayCounter(storage: Storage, options: { exactClients: number; log: Log }): DayCounter {
  const days: FileDays = {
    storage,
    journal: journalOf(storage, journalKey(0)),
    ...options,
    closed: new Map(),
    open: new Map(),
    listed: new Set(),
    warned: new Set(),
    queues: new Map(),
  };
  return {
    isCounted: (day, digest) => days.open.get(day)?.seen.has(digest) ?? false,
    addDay: (day, downloads) => serially(days, day, () => addToJournal(days, day, downloads)),
    async readDays(today) {
      return Promise.all((await countedDays(storage)).map((day) => countsOfDay(days, day, today)));
    },
  };
}

function serially<T>(days: FileDays, day: number, work: () => Promise<T>): Promise<T> {
  const next = (days.queues.get(day) ?? Promise.resolve()).then(work, work);
  days.queues.set(
    day,
    next.catch(() => {}),
  );
  return next;
}

/**
 * The day's journal as far as it is whole, from where this process stopped reading. Holding the
 * day's lock (`locked`), a torn last line can only be a killed writer's: it is cut off.
 */
async function readJournal(days: FileDays, day: number, locked: boolean): Promise<OpenDay> {
  const { journal, open, warned } = days;
  const fresh = (): OpenDay => ({ offset: 0, file: undefined, seen: new SeenClients(days.exactClients) });
  let state = open.get(day) ?? fresh();
  let { text, file } = await journal.readFrom(journalKey(day), state.offset);
  if (state.file !== undefined && file !== state.file) {
    // Replaced (`counts repair`) or removed: what this process read of it no longer holds.
    state = fresh();
    ({ text, file } = await journal.readFrom(journalKey(day), 0));
  }
  open.set(day, state);
  state.file = file;
  const { records, malformed, whole } = readJournalLines(text);
  for (const record of records) state.seen.add(record, record.field);
  if (malformed.length > 0 && !warned.has(`${day} ${file}`)) {
    warned.add(`${day} ${file}`);
    days.log.warn(
      `[downloads] stored ${journalKey(day)} holds ${malformed.length} malformed line(s), skipped; ` +
        '`npm run depot -- counts repair` rewrites it without them',
    );
  }
  state.offset += whole;
  if (locked && whole < text.length) await journal.truncate(journalKey(day), state.offset);
  return state;
}

/** Appends the day's downloads not yet counted to its journal, under its lock; resolves how many were new. */
function addToJournal(days: FileDays, day: number, downloads: Counted[]): Promise<number> {
  const { storage } = days;
  return withKeyLock(storage, journalKey(day), async () => {
    // A closed day is past counting (a batch held back longer than SEEN_DAYS).
    if (days.closed.has(day) || (await storage.hasItem(countsKey(day)))) return 0;
    const state = await readJournal(days, day, true);
    const before = state.seen.total();
    const changed = downloads.filter((download) => state.seen.add(download, download.field));
    if (changed.length === 0) return 0;
    try {
      // A day listed before its journal exists reads as zero; counts never go unlisted.
      if (!days.listed.has(day)) await withKeyLock(storage, DAYS_KEY, () => listDay(days, day));
      const lines = changed.map((download) => `${digestHex(download)} ${download.field}\n`).join('');
      await days.journal.append(journalKey(day), lines);
      state.offset += lines.length;
    } catch (error) {
      // The batch is retried; what this process knows of the day is read again from the
      // journal, as the seen clients took in the batch (the append was cut back).
      days.open.delete(day);
      throw error;
    }
    return state.seen.total() - before;
  });
}

async function listDay(days: FileDays, day: number): Promise<void> {
  const listed = await countedDays(days.storage);
  if (!listed.includes(day)) await days.storage.setItem(DAYS_KEY, [...listed, day]);
  days.listed.add(day);
}

/**
 * A closed day's counts: its record, written once from the journal by whoever reads it first.
 * `closed` false: the record could not be written (a full disk): the journal's counts are
 * answered, and the day is closed by a later read.
 */
function closeDay(days: FileDays, day: number): Promise<{ counts: Record<string, number>; closed: boolean }> {
  const { storage, journal } = days;
  return serially(days, day, () =>
    withKeyLock(storage, journalKey(day), async () => {
      const stored = await storage.getItem(countsKey(day));
      if (stored !== null) {
        // A process killed between the record and the journal's removal left the journal.
        await journal.remove(journalKey(day));
        days.open.delete(day);
        return { counts: parsedOr(DayCounts, stored, {}, countsKey(day)), closed: true };
      }
      const counts = (await readJournal(days, day, true)).seen.counts();
      try {
        await storage.setItem(countsKey(day), counts);
      } catch (error) {
        days.log.warn(
          `[downloads] could not close day ${day} (${(error as Error).message}); its journal is kept and read`,
        );
        return { counts, closed: false };
      }
      await journal.remove(journalKey(day));
      days.open.delete(day);
      return { counts, closed: true };
    }),
  );
}

/** A day's counts: closed days from memory once read, open ones from the journal's new lines. */
async function countsOfDay(days: FileDays, day: number, today: number): Promise<DayCount[]> {
  const known = days.closed.get(day);
  if (known) return known;
  // Closed by a process whose clock is ahead is closed too.
  const counting = (isCountable(day, today) || day > today) && !(await days.storage.hasItem(countsKey(day)));
  // The journal's fields were checked line by line (readJournalLines): no schema to run again.
  if (counting) return dayCountsOf(day, (await serially(days, day, () => readJournal(days, day, false))).seen.counts());
  const { counts, closed } = await closeDay(days, day);
  const dayCounts = dayCountsOf(day, counts);
  if (closed) days.closed.set(day, dayCounts);
  return dayCounts;
}
