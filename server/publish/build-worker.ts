import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HTTPError } from 'h3';
import type { Log } from '../helpers/log.ts';
import { refusalError } from './refusal.ts';
import { FromWorker, ToWorker, type ChangeCommand, type Written } from './worker-messages.ts';

/**
 * Issue 41: the publishing API's changes, made by one build worker process (build/changes/worker.ts,
 * forked on the first change and let go after a minute without one): the build's CPU stays off the
 * origin, one change is made at a time, and `server/` imports nothing of `build/`. Requests and
 * answers are typed messages (worker-messages.ts), checked on both sides.
 */
const WORKER = fileURLToPath(new URL('../../build/changes/worker.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

/** Changes that may wait behind the one being made; one more is refused 503 with Retry-After. */
const MAX_WAITING_CHANGES = 15;
/**
 * Changes one token may have waiting for their answer (not yet written) at once; one more is
 * refused 429 with Retry-After, so that one CI job in a loop cannot take every place on the origin
 * from the other publishers. A change already answered, its full build going on, counts for the
 * origin only.
 */
const MAX_CHANGES_PER_TOKEN = 10;
/** Why a change could not be made now, as the 503 says it. */
const BUSY = {
  'disk-full': "The depot's disk is full",
  'build-lock': 'Another build holds the build lock for too long',
} as const;

/** A worker without a change for this long is let go (its memory with it). */
const IDLE_MS = 60_000;

type ChangeRun = {
  /** The record is in data/ (its delta tree follows at once); null when nothing changed; rejected with the refusal as an HTTP error. */
  written: Promise<Written | null>;
  /** The whole change, its build included. */
  finished: Promise<unknown>;
};

export type BuildWorker = { run: (change: ChangeCommand) => ChangeRun; stop: () => void };

type Pending = {
  worker: ChildProcess;
  command: string;
  tokenId: string | undefined;
  /** Its record is written (or it changed nothing): its answer is on the way. */
  written: boolean;
  wrote: (written: Written | null) => void;
  done: () => void;
  fail: (error: HTTPError) => void;
};

export function createBuildWorker(log: Log): BuildWorker {
  let worker: ChildProcess | null = null;
  let idle: NodeJS.Timeout | undefined;
  let lastId = 0;
  const pending = new Map<number, Pending>();

  const start = () => {
    const child = fork(WORKER, [], { execArgv: ['--import', TSX], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (raw: unknown) => heard(raw));
    child.on('error', (error) => log.warn(`[publish] the build worker: ${error.message}`));
    child.on('exit', (code, signal) => {
      if (worker === child) worker = null;
      const held = [...pending.values()].filter((entry) => entry.worker === child).length;
      if (held > 0)
        log.warn(`[publish] the build worker stopped (${signal ?? `exit ${code}`}) with ${held} changes unfinished`);
      for (const [id, entry] of pending) {
        if (entry.worker !== child) continue;
        pending.delete(id);
        entry.fail(
          new HTTPError({
            status: 500,
            message: `the build worker stopped (${signal ?? `exit ${code}`}) before the ${entry.command} was made; the origin's log says why`,
          }),
        );
      }
    });
    return child;
  };

  const heard = (raw: unknown) => {
    const parsed = FromWorker.safeParse(raw);
    if (!parsed.success) return log.warn('[publish] the build worker sent a message that is not one, ignored');
    const message = parsed.data;
    const entry = pending.get(message.id);
    if (!entry) return;
    if ('log' in message) return log.info(message.log);
    if ('written' in message) {
      entry.written = true;
      return entry.wrote(message.written);
    }
    pending.delete(message.id);
    if (pending.size === 0) letGoWhenIdle();
    if ('done' in message) {
      entry.wrote(null);
      return entry.done();
    }
    if ('refused' in message)
      return entry.fail(refusalError(message.refused, message.refusal ?? { kind: 'field', field: 'metadata' }));
    log.warn(`[publish] ${entry.command} failed: ${message.failed}`);
    if (message.busy)
      return entry.fail(
        new HTTPError({
          status: 503,
          message: `${BUSY[message.busy]}: the ${entry.command} was not finished; try again after Retry-After seconds`,
          headers: { 'retry-after': '60' },
        }),
      );
    entry.fail(new HTTPError({ status: 500, message: `the ${entry.command} failed; the origin's log says why` }));
  };

  const letGoWhenIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      if (pending.size === 0 && worker?.connected) worker.disconnect();
      worker = null;
    }, IDLE_MS).unref();
  };

  return {
    run: (change) => {
      const { tokenId } = change.request;
      const held = [...pending.values()].filter((entry) => entry.tokenId === tokenId && !entry.written).length;
      if (tokenId !== undefined && held >= MAX_CHANGES_PER_TOKEN)
        throw new HTTPError({
          status: 429,
          message: `Token ${tokenId} has ${held} changes waiting for their answer on this origin, the most one token may; try again after Retry-After seconds`,
          headers: { 'retry-after': '30' },
        });
      if (pending.size > MAX_WAITING_CHANGES)
        throw new HTTPError({
          status: 503,
          message: `${pending.size} changes are being made or wait on this origin; try again after Retry-After seconds`,
          headers: { 'retry-after': '30' },
        });
      clearTimeout(idle);
      worker ??= start();
      const id = ++lastId;
      let wrote!: Pending['wrote'];
      let failWritten!: (error: HTTPError) => void;
      let done!: Pending['done'];
      let failFinished!: (error: HTTPError) => void;
      const written = new Promise<Written | null>((resolve, reject) => ([wrote, failWritten] = [resolve, reject]));
      const finished = new Promise<void>((resolve, reject) => ([done, failFinished] = [resolve, reject]));
      const fail = (error: HTTPError) => {
        failWritten(error);
        failFinished(error);
      };
      // Whoever awaits, a failure after the answer is only logged: never an unhandled rejection.
      finished.catch(() => {});
      written.catch(() => {});
      const message = ToWorker.parse({ id, change });
      // How answers and the log name it: a release, or a change (an edit, withdrawal or restore).
      const command = change.command === 'release' ? 'release' : 'change';
      pending.set(id, { worker, command, tokenId, written: false, wrote, done, fail });
      try {
        worker.send(message);
      } catch {
        // The worker is gone between its start and now (its exit fails what it held): a new one next time.
        pending.delete(id);
        worker = null;
        throw new HTTPError({
          status: 503,
          message: 'The build worker stopped; try again after Retry-After seconds',
          headers: { 'retry-after': '5' },
        });
      }
      return { written, finished };
    },
    stop: () => {
      clearTimeout(idle);
      // The worker makes what it was given, then exits.
      if (worker?.connected) worker.disconnect();
      worker = null;
    },
  };
}
