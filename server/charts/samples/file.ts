import { withKeyLock, type Storage } from '../../storage.ts';
import {
  RETENTION_DAYS,
  StoredDay,
  corruptDayLine,
  dayKey,
  foldSamples,
  readRange,
  storedDayValue,
  samplesByDay,
  stampOf,
  type Sample,
  type SampleStore,
} from './contract.ts';
import type { Log } from '../../helpers/log.ts';

type Waiting = { samples: Sample[]; written: (error?: unknown) => void };
/** Per day key: samples waiting for the day's next write, and whether a write is running. */
type Days = Map<string, { waiting: Waiting[]; writing: boolean }>;

/**
 * Samples in the embedded store (files; memory in tests): a day is read, folded and written whole
 * (atomically) under the day's file lock, which the CLI takes too; samples for a day that arrive
 * while it is being written wait and go together into its next write (group commit), so
 * durability costs one write per busy day, not per sample. `add` resolves once a write holding
 * all its samples is on disk. A stored day that does not parse (a torn or hand-edited file) is
 * never replaced: it is moved aside to `<day>.corrupt-<stamp>`, said once as a warning, and the day
 * starts afresh.
 */
export function fileSampleStore(storage: Storage, log: Log): SampleStore {
  const days: Days = new Map();
  const addToDay = (key: string, retiredKey: string, samples: Sample[]): Promise<void> => {
    const day = days.get(key) ?? { waiting: [], writing: false };
    days.set(key, day);
    const written = new Promise<void>((resolve, reject) =>
      day.waiting.push({ samples, written: (error) => (error ? reject(error) : resolve()) }),
    );
    if (!day.writing) void drain(storage, days, key, retiredKey, log);
    return written;
  };
  return {
    async add(serverId, samples) {
      await Promise.all(
        [...samplesByDay(samples)].map(([day, daySamples]) =>
          addToDay(dayKey(serverId, day), dayKey(serverId, day - RETENTION_DAYS - 1), daySamples),
        ),
      );
    },
    range: (serverId, from, to) => readRange(storage, serverId, from, to),
  };
}

/** Writes the day's waiting samples, group after group, until none wait. */
async function drain(storage: Storage, days: Days, key: string, retiredKey: string, log: Log) {
  const day = days.get(key)!;
  day.writing = true;
  while (day.waiting.length > 0) {
    const group = day.waiting.splice(0);
    await writeDay(storage, key, retiredKey, group, log).then(
      () => group.forEach((waiting) => waiting.written()),
      (error: unknown) => group.forEach((waiting) => waiting.written(error ?? new Error('write failed'))),
    );
  }
  days.delete(key);
}

/** The journal segment a fold comes from, and the segments still on disk (the only ones a day keeps naming). */
export type FoldingSegment = { id: string; live: ReadonlySet<string> };

async function writeDay(storage: Storage, key: string, retiredKey: string, group: Waiting[], log: Log): Promise<void> {
  await foldIntoDay(
    storage,
    key,
    retiredKey,
    group.flatMap((waiting) => waiting.samples),
    log,
  );
}

/**
 * Folds samples into a stored day, read and written whole under the day's lock. From a journal
 * segment (`segment`), a day that names the segment already holds its samples and is left as it
 * is; otherwise the day names it from then on. Resolves `false` when it was already folded.
 */
export async function foldIntoDay(
  storage: Storage,
  key: string,
  retiredKey: string,
  samples: readonly Sample[],
  log: Log,
  segment?: FoldingSegment,
): Promise<boolean> {
  const folded = await withKeyLock(storage, key, async () => {
    const stored = await storage.getItem(key);
    // A file holding `null` reads as null too: only a day that is not there at all starts empty.
    const absent = stored === null && !(await storage.hasItem(key));
    const parsed = StoredDay.safeParse(absent ? {} : stored);
    if (!parsed.success) {
      // The bytes of a day that does not parse are kept beside it, before the day is written anew.
      const aside = `${key}.corrupt-${stampOf(new Date())}`;
      await storage.setItemRaw(aside, await storage.getItemRaw(key));
      log.warn(corruptDayLine(key, aside));
    }
    const day: StoredDay = parsed.success ? parsed.data : { hours: {}, folded: [] };
    if (segment && day.folded.includes(segment.id)) return false;
    foldSamples(day.hours, samples);
    if (segment) day.folded = [...day.folded.filter((id) => segment.live.has(id)), segment.id];
    await storage.setItem(key, storedDayValue(day));
    return true;
  });
  // Retention: the day that has just left the 365-day window goes.
  await storage.removeItem(retiredKey).catch(() => {}); // a leftover day is harmless: range() never reads it
  return folded;
}
