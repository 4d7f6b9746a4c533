import { statSync, watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { STDERR_LINES, type Log } from '../helpers/log.ts';
import { CURRENT_LINK } from './format.ts';
import { currentTreeDir, openTree, type Tree } from './open.ts';

/** A tree that failed to open is said again at most this often while `current` still points at it. */
const REPEAT_FAILURE_MS = 60_000;
/** How long after a swap the new tree's catalog is prepared: the requests that noticed the release are answered first. */
const PREPARE_CATALOG_AFTER_MS = 500;
/** Looks in a row while watch events keep coming; the poll takes over after that. */
const MAX_LOOKS_IN_A_ROW = 8;

export type FollowOptions = {
  /** How often `current` is read when no watch event came (fs.watch misses some: NFS, dist/ recreated). */
  intervalMs?: number;
  now?: () => number;
  /** Where a watcher failure is said, once, and an older or invalid catalog; default plain lines on stderr. */
  log?: Log;
};

/**
 * Follows `dist/current` (watchLink) and opens the new tree when it moved. A burst of events is one
 * or two looks. A request in flight keeps the tree it started with; old trees stay on disk for a
 * while. A tree that fails to open is reported once, then at most once a minute, and tried again
 * less and less often (up to once a minute); a link that moves on to another tree is tried at once.
 */
export function followCurrentTree(
  distDir: string,
  initial: Tree,
  onError: (error: unknown, dir: string) => void,
  options: FollowOptions = {},
) {
  const intervalMs = options.intervalMs ?? 200;
  const log = options.log ?? STDERR_LINES;
  const retries = retryPlan(intervalMs, options.now ?? Date.now);
  let tree = initial;
  let stopped = false;
  let moved: (() => void)[] = [];

  async function look() {
    let dir: string | null = null;
    try {
      dir = await currentTreeDir(distDir);
      if (!dir || dir === tree.dir || retries.waiting(dir)) return;
      const opened = await openTree(dir, tree, log);
      retries.clear();
      if (stopped) return;
      tree = opened;
      for (const resolve of moved) resolve();
      moved = [];
      prepareCatalog(opened, () => tree, log);
    } catch (error) {
      const failed = dir ?? distDir;
      if (retries.failed(failed)) onError(error, failed);
    }
  }

  const check = oneLookAtATime(
    look,
    () => stopped,
    (error) => onError(error, distDir),
  );
  const watching = watchLink(distDir, check, { intervalMs, log });
  prepareCatalog(initial, () => tree, log);
  return {
    current: () => tree,
    /** Resolves once the next tree is served. */
    next: () => new Promise<void>((resolve) => moved.push(resolve)),
    stop: () => {
      stopped = true;
      watching.stop();
    },
  };
}

/**
 * When a tree that failed to open is tried again (after twice the interval, then four times, up to
 * a minute), and whether its failure is said (the first time, then at most once a minute).
 */
function retryPlan(intervalMs: number, now: () => number) {
  let failing: { dir: string; failures: number; retryAt: number; saidAt: number } | null = null;
  return {
    waiting: (dir: string) => failing?.dir === dir && now() < failing.retryAt,
    clear: () => {
      failing = null;
    },
    /** Notes a failure to open `dir`; true when it is to be said. */
    failed: (dir: string): boolean => {
      const time = now();
      const again = failing?.dir === dir ? failing : null;
      const failures = (again?.failures ?? 0) + 1;
      const say = !again || time - again.saidAt >= REPEAT_FAILURE_MS;
      failing = {
        dir,
        failures,
        retryAt: time + Math.min(REPEAT_FAILURE_MS, intervalMs * 2 ** failures),
        saidAt: say ? time : again.saidAt,
      };
      return say;
    },
  };
}

/** `look` now, or once more right after the look under way (which may have read the link before it moved). */
function oneLookAtATime(look: () => Promise<void>, stopped: () => boolean, onError: (error: unknown) => void) {
  let looking = false;
  let lookAgain = false;
  return () => {
    if (stopped()) return;
    if (looking) {
      lookAgain = true;
      return;
    }
    looking = true;
    void (async () => {
      for (let i = 0; i < MAX_LOOKS_IN_A_ROW && !stopped(); i++) {
        lookAgain = false;
        await look();
        if (!lookAgain) break;
      }
    })()
      .catch(onError)
      .finally(() => (looking = false));
  };
}

/**
 * The catalog is validated a little after the swap rather than at the first live request that
 * needs it; the release's own answers, from the manifest, come first. An invalid one is said here.
 */
function prepareCatalog(opened: Tree, current: () => Tree, log: Log) {
  setTimeout(() => {
    if (opened !== current()) return; // already replaced
    try {
      void opened.catalog;
    } catch (error) {
      log.warn(
        `[tree] ${opened.dir}: answers that need the catalog fail until the next tree: ${(error as Error).message}`,
      );
    }
  }, PREPARE_CATALOG_AFTER_MS).unref();
}

/**
 * Calls `onMove` when `dist/current` may have moved: on a watch event of dist/ (inotify on Linux:
 * the swap renames a new link onto `current`), and every `intervalMs` in case an event was missed or
 * the watcher failed (said once, a warning). dist/ removed or recreated is watched again.
 */
function watchLink(distDir: string, onMove: () => void, { intervalMs, log }: { intervalMs: number; log: Log }) {
  let watcher: FSWatcher | null = null;
  let watchedIno = 0;
  let watchFailed = false;
  let stopped = false;
  const stopWatching = () => {
    watcher?.close();
    watcher = null;
  };
  const failWatching = (error: unknown) => {
    stopWatching();
    if (watchFailed) return;
    watchFailed = true;
    log.warn(
      `[tree] cannot watch ${distDir} (${(error as Error).message}); rebuilds are noticed by polling every ${intervalMs} ms`,
    );
  };
  const startWatching = () => {
    try {
      const { ino } = statSync(distDir);
      watcher = watch(distDir, { persistent: false }, (_event, name) => {
        if (name === null || name === CURRENT_LINK) onMove();
      });
      watcher.on('error', failWatching);
      watchedIno = ino;
    } catch (error) {
      failWatching(error);
    }
  };
  /** dist/ removed or recreated: an inotify watch stays on the old directory, so watch the new one. */
  let rewatching = false;
  const keepWatching = async () => {
    if (rewatching) return;
    rewatching = true;
    try {
      const ino = await stat(distDir).then(
        (s) => s.ino,
        () => null,
      );
      if (stopped) return;
      if (watcher && ino !== watchedIno) stopWatching();
      if (!watcher && ino !== null) startWatching();
    } finally {
      rewatching = false;
    }
  };

  startWatching();
  const timer = setInterval(() => {
    onMove();
    void keepWatching();
  }, intervalMs);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
      stopWatching();
    },
  };
}
