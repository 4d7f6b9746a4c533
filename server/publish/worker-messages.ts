import { z } from 'zod';
import { ReleaseRequest, ReviseRequest } from './change-requests.ts';

/**
 * Issue 41: what the origin and its build worker (build/changes/worker.ts, forked) say to each
 * other, checked with zod on both sides: a change to make, and what became of it.
 */

export const ChangeCommand = z.discriminatedUnion('command', [
  z.strictObject({ command: z.literal('release'), request: ReleaseRequest }),
  z.strictObject({ command: z.literal('revise'), request: ReviseRequest }),
]);
export type ChangeCommand = z.infer<typeof ChangeCommand>;

/** To the worker: change number `id`. */
export const ToWorker = z.strictObject({ id: z.number().int(), change: ChangeCommand });
export type ToWorker = z.infer<typeof ToWorker>;

const Refusal = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('field'), field: z.string() }),
  z.strictObject({ kind: z.literal('duplicate'), existingId: z.string() }),
  z.strictObject({ kind: z.literal('not-a-jar') }),
  z.strictObject({ kind: z.literal('unknown-version') }),
  z.strictObject({ kind: z.literal('conflict') }),
]);

/** A change's record is in data/: its id, and for a revision its new updatedAt (the served tree shows it soon after). */
const Written = z.strictObject({ id: z.string(), updatedAt: z.string().optional() });
export type Written = z.infer<typeof Written>;

/** From the worker, about change `id`: a progress line, its record committed, its end (done, refused or failed). */
export const FromWorker = z.union([
  z.strictObject({ id: z.number().int(), log: z.string() }),
  z.strictObject({ id: z.number().int(), written: Written }),
  z.strictObject({ id: z.number().int(), done: z.strictObject({ id: z.string(), unchanged: z.boolean().optional() }) }),
  z.strictObject({ id: z.number().int(), refused: z.string(), refusal: Refusal.nullable() }),
  /** `busy` (a 503 with Retry-After): the disk is full, or another build holds the build lock too long. `failed` is for the log. */
  z.strictObject({ id: z.number().int(), failed: z.string(), busy: z.enum(['disk-full', 'build-lock']).nullable() }),
]);
export type FromWorker = z.infer<typeof FromWorker>;
