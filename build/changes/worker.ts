import { readConfig } from '../../server/config.ts';
import { describeIssues } from '../../server/helpers/describe-issues.ts';
import { sweepLeftovers } from '../../server/sweep-leftovers.ts';
import { FromWorker, ToWorker, type ChangeCommand } from '../../server/publish/worker-messages.ts';
import { BuildLockTimeoutError } from '../build-lock.ts';
import type { Progress } from './progress.ts';
import { RefusedError } from './refused.ts';
import { releaseJar } from './release.ts';
import { revise } from './revise.ts';

// Issue 41: the publishing origin's build worker, forked by server/publish/build-worker.ts. It
// makes the changes it is sent, one at a time, with the origin's configuration, and says what
// became of each: typed messages both ways, no argv and no stderr protocol. Builds run here, off
// the origin's event loop. Once the origin lets go (disconnect), it finishes what it was given and exits.

const config = readConfig();

const send = (message: FromWorker) => {
  if (process.connected) process.send!(FromWorker.parse(message));
};

// Listening from the first moment: the origin sends its first change as soon as it forks this.
let queue: Promise<void> = sweepLeftovers([config.dataDir]).then(
  () => {},
  (error: unknown) => console.error(`[build worker] leftovers in data/ not swept: ${(error as Error).message}`),
);
process.on('message', (raw: unknown) => {
  const parsed = ToWorker.safeParse(raw);
  if (!parsed.success) {
    console.error(`[build worker] a message that is no change, ignored: ${describeIssues(parsed.error.issues)}`);
    return;
  }
  const { id, change } = parsed.data;
  queue = queue.then(() => make(id, change));
});
process.on('disconnect', () => void queue.then(() => process.exit(0)));

async function make(id: number, change: ChangeCommand): Promise<void> {
  const progress: Progress = {
    log: (line) => send({ id, log: line }),
    written: (written) => send({ id, written }),
  };
  try {
    const now = new Date();
    const result =
      change.command === 'release'
        ? await releaseJar(change.request, config, now, progress)
        : await revise(change.request, config, now, progress);
    send({ id, done: { id: result.id, ...('unchanged' in result ? { unchanged: true } : {}) } });
  } catch (error) {
    send(endOf(id, error));
  }
}

/** A refusal as the API answers it, or a failure: `busy` (503) for a full disk or a build that holds the lock too long. */
function endOf(id: number, error: unknown): FromWorker {
  if (error instanceof RefusedError) return { id, refused: error.message, refusal: error.refusal ?? null };
  const code = (error as NodeJS.ErrnoException).code;
  const busy =
    code === 'ENOSPC' || code === 'EDQUOT' ? 'disk-full' : error instanceof BuildLockTimeoutError ? 'build-lock' : null;
  if (busy) return { id, failed: (error as Error).message, busy };
  return { id, failed: (error as Error).stack ?? String(error), busy: null };
}
