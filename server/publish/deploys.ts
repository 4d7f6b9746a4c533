import { basename } from 'node:path';
import type { AuditStore } from '../audit/store/contract.ts';
import type { Log } from '../helpers/log.ts';
import { runAfterSwap, type AfterSwapResult } from './after-swap.ts';

/** Who published the change a run deploys: the token's user and the token, as the audit log names them. */
type DeployActor = { actor: string; tokenId: string };

/**
 * AFTER_SWAP after each swap a publish makes (issue 30 item 5), one run at a time: two runs at once
 * would be two rsyncs into one destination. Each run copies the tree served when its turn comes, so a
 * run queued behind a newer swap copies the newest tree, never a superseded one.
 */
export type Deploys = {
  /** AFTER_SWAP on the tree served now (after any run under way): the publish's answer waits for it. */
  run(by: DeployActor): Promise<AfterSwapResult>;
  /**
   * Once a publish's whole command has finished (its full build swapped in later trees): AFTER_SWAP
   * again if the tree served then is not the one last copied. Never rejects; a failure is logged.
   */
  follow(finished: Promise<unknown>, by: DeployActor): void;
};

export type DeploysOptions = {
  command: string;
  /** The tree dist/current points to now: what AFTER_SWAP copies (its `current` link included). */
  servedTree: () => Promise<string>;
  /** A failed run is written there: who published, the tree and the exit code; never the command or its output. */
  audit: AuditStore;
  log: Log;
  now: () => number;
  timeoutMs?: number;
};

/** The deploy queue of one publishing origin, held by its Publishing (no module state). */
export function createDeploys(options: DeploysOptions): Deploys {
  const { command, log } = options;
  let tail: Promise<unknown> = Promise.resolve();
  let lastTree: string | null = null;
  const enqueue = <T>(task: () => Promise<T>): Promise<T> => {
    const turn = tail.then(task);
    tail = turn.catch(() => undefined);
    return turn;
  };
  const deploy = async (by: DeployActor, tree: string) => {
    lastTree = tree;
    const result = await runAfterSwap(command, tree, log, options.timeoutMs);
    if (!result.ok) await recordFailure(options, by, tree, result);
    return result;
  };
  return {
    run: (by) => enqueue(async () => deploy(by, await options.servedTree())),
    follow(finished, by) {
      const settled = finished.then(
        () => undefined,
        () => undefined,
      );
      void settled
        .then(() =>
          enqueue(async () => {
            const tree = await options.servedTree();
            if (tree !== lastTree) await deploy(by, tree);
          }),
        )
        .catch((error: unknown) => log.warn(`[publish] AFTER_SWAP after the build could not run: ${String(error)}`));
    },
  };
}

/** A failed run: one warning line and one audit record (`deploy fail`); a record that cannot be stored is said. */
async function recordFailure(options: DeploysOptions, by: DeployActor, tree: string, result: AfterSwapResult) {
  const exit = result.exitCode ?? 'none';
  options.log.warn(
    `[publish] AFTER_SWAP failed (exit ${exit}) on tree ${basename(tree)}; this origin serves it, AFTER_SWAP's destination does not`,
  );
  try {
    await options.audit.append({
      at: new Date(options.now()).toISOString(),
      action: 'deploy fail',
      target: basename(tree),
      actor: by.actor,
      tokenId: by.tokenId,
      changes: { exitCode: result.exitCode, tree },
    });
  } catch (error) {
    options.log.warn(`[audit] AFTER_SWAP's failure could not be written to the audit log: ${(error as Error).message}`);
  }
}
