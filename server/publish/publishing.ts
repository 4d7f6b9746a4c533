import type { Redis } from 'ioredis';
import { auditStore } from '../audit/store.ts';
import type { Storage } from '../storage.ts';
import type { Log } from '../helpers/log.ts';
import { createBuildWorker, type BuildWorker } from './build-worker.ts';
import { createDeploys, type Deploys } from './deploys.ts';

/** Where this origin publishes (PUBLISH=on): its upload limit, the folder uploads stream into, and AFTER_SWAP's queue. */
export type Publishing = {
  maxBytes: number;
  uploadsDir: string;
  /** null: AFTER_SWAP is not set. */
  deploys: Deploys | null;
  /** Makes the changes (issue 41): a build worker, forked when a change comes. */
  changes: BuildWorker;
  /** Resolves when this origin serves its next tree: a change waits on it, not on a poll. */
  nextTree: () => Promise<void>;
};

/** PUBLISH=on as configured (server/config.ts). */
export type PublishSettings = { maxBytes: number; uploadsDir: string; afterSwap?: string | undefined };

/**
 * The origin's publishing, with its own AFTER_SWAP queue: one per origin, made when it starts. A
 * failed AFTER_SWAP is written to the audit log of the origin's store (files or Redis).
 */
export function createPublishing(
  settings: PublishSettings,
  parts: {
    servedTree: () => Promise<string>;
    storage: Storage;
    redis?: Redis | undefined;
    log: Log;
    now: () => number;
    nextTree: () => Promise<void>;
  },
): Publishing {
  const { maxBytes, uploadsDir, afterSwap } = settings;
  const deploys = afterSwap
    ? createDeploys({
        command: afterSwap,
        servedTree: parts.servedTree,
        audit: auditStore(parts.storage, parts.redis),
        log: parts.log,
        now: parts.now,
      })
    : null;
  const changes = createBuildWorker(parts.log);
  return { maxBytes, uploadsDir, deploys, changes, nextTree: parts.nextTree };
}
