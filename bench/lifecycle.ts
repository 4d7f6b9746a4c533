import { setTimeout as sleep } from 'node:timers/promises';
import { versionPath } from '../server/versions/paths.ts';

/** A version as the origin answers it; only what the checks below read. */
type Answered = { id: string; channel: string; withdrawn?: { reason: string } };

/** Issue 29's changes to a released version, each timed from its command's start until the origin serves it. */
type LifecycleTimes = { withdraw: number; restore: number; edit: number };

/** Runs one `depot` command (a new process, as an operator runs it) to its end. */
type RunDepot = (args: string[]) => Promise<unknown>;

/**
 * From `run()` (a new process) until `served()` holds, polled every 10 ms for at most 30 s; the
 * command is then awaited (its full build), so that the next one does not wait for its build lock.
 */
export async function timeUntilServed(run: () => Promise<unknown>, served: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  let failed: unknown;
  const done = run().catch((error: unknown) => {
    failed = error;
  });
  const deadline = Date.now() + 30_000;
  while (!(await served())) {
    if (failed) throw failed;
    if (Date.now() > deadline) throw new Error('the change was not served within 30 s');
    await sleep(10);
  }
  const ms = performance.now() - started;
  await done;
  if (failed) throw failed;
  return ms;
}

/** The id of the version `path` (a latest answer) names; null when the origin answers none (SPEC's 404). */
async function latestId(base: string, path: string): Promise<string | null> {
  const response = await fetch(base + path);
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return ((await response.json()) as { version: Answered }).version.id;
}

async function answeredById(base: string, id: string): Promise<Answered> {
  const response = await fetch(base + versionPath(id));
  if (!response.ok) throw new Error(`${versionPath(id)}: ${response.status}`);
  return ((await response.json()) as { version: Answered }).version;
}

/**
 * The latest version at `path` (just released) withdrawn, restored, then moved to the beta channel
 * by `depot withdraw`, `restore` and `edit --channel beta`, each timed until the origin serves it:
 * withdrawn, no longer the latest and its own answer saying `withdrawn`; restored, the latest again
 * and its own answer without it; edited, no longer the latest (another version or SPEC's 404) and
 * its own answer on `beta`. The version ends on beta, so the next release is the latest as before.
 */
export async function lifecycleToServed(base: string, path: string, runDepot: RunDepot): Promise<LifecycleTimes> {
  const id = await latestId(base, path);
  if (!id) throw new Error(`${path}: no latest version to withdraw`);
  const withdraw = await timeUntilServed(
    () => runDepot(['withdraw', id, '--reason', 'bench: corrupts worlds', '--by', 'bench']),
    async () => (await latestId(base, path)) !== id && (await answeredById(base, id)).withdrawn !== undefined,
  );
  const restore = await timeUntilServed(
    () => runDepot(['restore', id, '--by', 'bench']),
    async () => (await latestId(base, path)) === id && (await answeredById(base, id)).withdrawn === undefined,
  );
  const edit = await timeUntilServed(
    () => runDepot(['edit', id, '--channel', 'beta', '--by', 'bench']),
    async () => (await latestId(base, path)) !== id && (await answeredById(base, id)).channel === 'beta',
  );
  return { withdraw, restore, edit };
}
