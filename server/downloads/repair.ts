import { DAY } from '../helpers/duration.ts';
import { withKeyLock, type Storage } from '../storage.ts';
import { digestHex } from './digest-set.ts';
import { journalOf } from './journal.ts';
import { readJournalLines } from './journal-lines.ts';
import { countedDays, journalKey } from './store.ts';

/** Dropped text shown per day at most: the report stays one readable object however torn a journal is. */
const SHOWN_PER_DAY = 20;

/** What `counts repair` did to one day's journal. */
export type RepairedJournal = {
  day: string;
  /** Counted downloads' lines kept, in their order. */
  kept: number;
  /** Pieces of text that were no line (torn appends), dropped. */
  dropped: number;
  /** The dropped text, up to SHOWN_PER_DAY pieces. */
  droppedText: string[];
};

/**
 * Rewrites every open day's journal without its torn or malformed text: each journal is read
 * whole under the day's lock (the lock every writer takes), and when it holds anything that is not
 * a line, replaced at once (temporary file, fsync, rename) by its records alone, in their order; a
 * whole line that followed a torn one on the same line is kept. A running origin notices the new
 * file and reads it from its start. Journals that are whole are left as they are.
 */
export async function repairJournals(storage: Storage): Promise<{ journals: number; repaired: RepairedJournal[] }> {
  const journal = journalOf(storage, journalKey(0));
  const repaired: RepairedJournal[] = [];
  let journals = 0;
  for (const day of await countedDays(storage)) {
    const key = journalKey(day);
    await withKeyLock(storage, key, async () => {
      const { text, file } = await journal.readFrom(key, 0);
      if (file === undefined) return; // closed, or nothing counted yet
      journals++;
      const { records, malformed, whole } = readJournalLines(text);
      // Under the lock a last line without its newline is a dead writer's: torn too.
      const dropped = whole < text.length ? [...malformed, text.slice(whole)] : malformed;
      if (dropped.length === 0) return;
      await journal.replace(key, records.map((record) => `${digestHex(record)} ${record.field}\n`).join(''));
      repaired.push({
        day: new Date(day * DAY).toISOString().slice(0, 10),
        kept: records.length,
        dropped: dropped.length,
        droppedText: dropped.slice(0, SHOWN_PER_DAY),
      });
    });
  }
  return { journals, repaired };
}
