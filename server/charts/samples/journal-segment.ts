import { jsonOrUndefined } from '../../data-files.ts';
import { randomBytes } from 'node:crypto';
import { open, readdir, readFile, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { PRIVATE_FILE } from '../../storage.ts';
import { samplesByDay, type Sample } from './contract.ts';
import { ServerId } from '../schema.ts';
import type { Log } from '../../helpers/log.ts';

/** A segment's file: `<id>.samples-journal`, a name the store's key listing skips (storage.ts). */
export const SEGMENT_SUFFIX = '.samples-journal';

/** One line of a segment: one `add` (a server's samples), as `{"server": id, "samples": [[at, players], ...]}`. */
const JournalLine = z.strictObject({
  server: ServerId,
  samples: z.array(z.tuple([z.int().nonnegative(), z.int().min(0).max(1_000_000)])).min(1),
});

/**
 * One file of the journal and the samples it holds, by server and UTC day, kept in memory until
 * they are folded into the stored days (ranges merge them meanwhile).
 */
export type Segment = {
  id: string;
  path: string;
  /** Server -> UTC day -> its samples in this segment. */
  held: Map<string, Map<number, Sample[]>>;
  /** Samples held, for rotation. */
  count: number;
};

/** Segment ids sort in the order they were made: the start in base 36 (fixed width until 5188), then randomness. */
const newSegmentId = (now: number) => `${now.toString(36)}-${randomBytes(4).toString('hex')}`;

/** Records samples as held by the segment (after they are on disk, or read back from it). */
export function holdSamples(segment: Segment, serverId: string, samples: readonly Sample[]): void {
  const days = segment.held.get(serverId) ?? new Map<number, Sample[]>();
  segment.held.set(serverId, days);
  for (const [day, daySamples] of samplesByDay(samples)) {
    const list = days.get(day);
    if (list) list.push(...daySamples);
    else days.set(day, daySamples);
  }
  segment.count += samples.length;
}

/** The line that journals one `add`. */
export const journalLine = (serverId: string, samples: readonly Sample[]) =>
  `${JSON.stringify({ server: serverId, samples: samples.map((s) => [s.at, s.players]) })}\n`;

/** A new, empty segment file; its name is on disk (the folder synced) before anything is appended. */
export async function createSegment(dir: string, now: number): Promise<{ segment: Segment; file: FileHandle }> {
  const id = newSegmentId(now);
  const path = join(dir, `${id}${SEGMENT_SUFFIX}`);
  const file = await open(path, 'wx', PRIVATE_FILE);
  try {
    const folder = await open(dir, 'r');
    await folder.sync().finally(() => folder.close());
  } catch (error) {
    await file.close();
    await rm(path, { force: true });
    throw error;
  }
  return { segment: { id, path, held: new Map(), count: 0 }, file };
}

/** Writes all of `bytes`: a write may take less than asked (a disk about to fill) without an error. */
export async function appendAll(file: FileHandle, bytes: Buffer): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await file.write(bytes, written, bytes.length - written);
    // No progress and no error: a full disk said so without ENOSPC; fail rather than spin.
    if (bytesWritten === 0) throw Object.assign(new Error('no space left to append'), { code: 'ENOSPC' });
    written += bytesWritten;
  }
}

/** The segments a previous process left in `dir`, oldest first. */
export async function leftSegments(dir: string): Promise<{ id: string; path: string }[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) =>
    error.code === 'ENOENT' ? [] : Promise.reject(error),
  );
  return names
    .filter((name) => name.endsWith(SEGMENT_SUFFIX))
    .map((name) => ({ id: name.slice(0, -SEGMENT_SUFFIX.length), path: join(dir, name) }))
    .filter(({ id }) => /^[0-9a-z]{1,12}-[0-9a-f]{8}$/.test(id))
    .sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * Reads a segment a previous process left: every line is checked (it is data from disk). A last
 * line without its newline was cut by a kill mid-append, so never answered: it is skipped. Either
 * kind of skipped line is said once per segment as a warning.
 */
export async function readSegment(left: { id: string; path: string }, log: Log): Promise<Segment> {
  const segment: Segment = { ...left, held: new Map(), count: 0 };
  const lines = (await readFile(left.path, 'utf8')).split('\n');
  const torn = lines.pop() !== '';
  let invalid = 0;
  for (const text of lines) {
    const line = JournalLine.safeParse(jsonOrUndefined(text));
    if (!line.success) invalid++;
    else
      holdSamples(
        segment,
        line.data.server,
        line.data.samples.map(([at, players]) => ({ at, players })),
      );
  }
  if (torn)
    log.warn(
      `[samples] journal ${left.path} ends in a line cut short (a kill while appending, never answered): skipped`,
    );
  if (invalid > 0) log.warn(`[samples] journal ${left.path}: ${invalid} line(s) that are not samples skipped`);
  return segment;
}
