import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { getRouterParam, type H3Event } from 'h3';
import type { ServerRequest } from 'srvx';
import { DAY } from '../helpers/duration.ts';
import { guarded } from '../http/after-response.ts';
import { requestClient } from '../http/client-address.ts';
import { STDERR_LINES, type Log } from '../helpers/log.ts';
import { throttledLog } from '../helpers/throttled-log.ts';
import { findSoftware } from '../versions/software.ts';
import { DigestSet, seenDigest } from './digest-set.ts';
import type { Counted } from './counted.ts';
import { countField, type DownloadStore } from './store.ts';
import { JAR_RULES, VERSION_RULES } from '../versions/paths.ts';
import { matchFirst } from '../http/path-rule.ts';

/** How often counted downloads go to the store, in one batch. */
export const FLUSH_MS = 1000;
/** Downloads waiting for the store at most; more are dropped (and said) while the store is down. */
const MAX_WAITING = 50_000;

/**
 * A JAR route: by id, or latest/resolve per software (the version is its Content-Location, a
 * version's own download). Its version's id (by id) or its software's name (raw, as in the path).
 */
export function matchJarRoute(path: string): { id?: string; software?: string } | undefined {
  return matchFirst(JAR_RULES, path);
}

/** The version a Content-Location names: its own download's id. */
export const locationId = (location: string | undefined) =>
  location === undefined ? undefined : VERSION_RULES.download.match(location)?.id;

export type CounterOptions = {
  store: DownloadStore;
  now: () => number;
  trustProxy: (address: string) => boolean;
  /** DOWNLOAD_COUNTS: false counts nothing (reading the stored counts still works). */
  enabled: boolean;
  log?: Log;
};

/**
 * Of a precomputed answer's route entry (the tree's RouteEntry), what tells a JAR and its version:
 * its file and its headers. Only these, so counting does not depend on the tree's format.
 */
type TreeAnswer = { file: string; headers: Readonly<Record<string, string>> };

/** Counted downloads waiting for the store, and the timer and write that take them there. */
type PendingCounts = {
  store: DownloadStore;
  warn: (line: string) => void;
  /** The digests queued since the last flush: a retry or a download manager's range requests are queued once. */
  queued: DigestSet;
  waiting: Counted[];
  timer: NodeJS.Timeout | undefined;
  /** The last flush, each chained after the one before: batches reach the store one at a time. */
  flushing: Promise<void>;
};

function scheduleFlush(pending: PendingCounts): void {
  pending.timer ??= setTimeout(() => void flushCounts(pending), FLUSH_MS).unref();
}

function queueCount(pending: PendingCounts, download: Counted): void {
  if (pending.waiting.length >= MAX_WAITING)
    return pending.warn(`[downloads] ${MAX_WAITING} downloads wait for the store; dropping`);
  pending.waiting.push(download);
  scheduleFlush(pending);
}

/** Stores the waiting batch; when the store fails, the batch waits again (within MAX_WAITING) for the next flush. */
function flushCounts(pending: PendingCounts): Promise<void> {
  pending.timer = undefined;
  pending.flushing = pending.flushing.then(async () => {
    const batch = pending.waiting;
    pending.waiting = [];
    pending.queued = new DigestSet();
    if (batch.length === 0) return;
    try {
      await pending.store.add(batch);
    } catch (error) {
      pending.waiting = [...batch.slice(0, MAX_WAITING - pending.waiting.length), ...pending.waiting];
      pending.warn(`[downloads] could not store ${batch.length} counts; retrying: ${(error as Error).message}`);
      scheduleFlush(pending);
    }
  });
  return pending.flushing;
}

/** Queues a download unless the same client, version and day is queued or known to be counted. */
function queueOnce(pending: PendingCounts, day: number, versionId: string, field: string, client: string): void {
  const digest = seenDigest(day, versionId, client);
  if (!pending.store.isCounted(day, digest) && pending.queued.add(digest))
    queueCount(pending, { high: digest.high, low: digest.low, day, field });
}

/** What counting an answer needs: the queue, the clock, whom to trust for the client's address. */
type Counting = {
  pending: PendingCounts;
  now: () => number;
  trustProxy: (address: string) => boolean;
  /**
   * What each connection had counted last: a repeat on it (a retry, a download manager's range
   * requests on one keep-alive connection) is dropped before its client is even resolved.
   */
  lastOnConnection: WeakMap<Socket, { day: number; field: string; forwardedFor: unknown }>;
};

/** Counts the answer once Node has sent it, if it is a GET answered 200 or 206. */
function countAfter(counting: Counting, event: H3Event, versionId: string, field: string): void {
  if (event.req.method !== 'GET') return;
  const node = (event.req as ServerRequest).runtime?.node;
  const res = node?.res as ServerResponse | undefined;
  const socket = node?.req.socket;
  if (!res || !socket) return;
  const day = Math.floor(counting.now() / DAY);
  const forwardedFor = node!.req.headers['x-forwarded-for'];
  const last = counting.lastOnConnection.get(socket);
  if (last && last.day === day && last.field === field && last.forwardedFor === forwardedFor) return;
  const { key } = requestClient(event, counting.trustProxy);
  res.once(
    'finish',
    guarded('downloads', () => {
      if (res.statusCode !== 200 && res.statusCode !== 206) return;
      counting.lastOnConnection.set(socket, { day, field, forwardedFor });
      queueOnce(counting.pending, day, versionId, field, key);
    }),
  );
}

type CountTarget = { versionId: string; field: string } | null;

/** What a tree's JAR route counts under (null: not a JAR route), worked out once per route of a tree. */
function treeTarget(targets: WeakMap<TreeAnswer, CountTarget>, pathname: string, entry: TreeAnswer): CountTarget {
  let target = targets.get(entry);
  if (target !== undefined) return target;
  const match = entry.file.endsWith('.jar') ? matchJarRoute(pathname) : undefined;
  const versionId = match && (match.id ?? locationId(entry.headers['content-location']));
  const software = match?.software === undefined ? undefined : findSoftware(decodeURIComponent(match.software));
  target = versionId ? { versionId, field: countField(versionId, software) } : null;
  targets.set(entry, target);
  return target;
}

/**
 * Counts JAR downloads after their answer. A JAR answer registers a 'finish' listener on Node's
 * response; once the body has gone out, a GET answered 200 or 206 is queued in memory, and the
 * queue goes to the store in one batch a second, never on a response's path. Only answers Node
 * sends are counted: the build's in-process requests are not downloads. Nothing here throws into
 * an answer; a store that is down keeps the batch (up to MAX_WAITING) for the next flush.
 */
export function createDownloadCounter(options: CounterOptions) {
  const log = options.log ?? STDERR_LINES;
  const pending: PendingCounts = {
    store: options.store,
    warn: throttledLog((line) => log.warn(line)),
    queued: new DigestSet(),
    waiting: [],
    timer: undefined,
    flushing: Promise.resolve(),
  };
  const counting: Counting = {
    pending,
    now: options.now,
    trustProxy: options.trustProxy,
    lastOnConnection: new WeakMap(),
  };
  const treeTargets = new WeakMap<TreeAnswer, CountTarget>();

  return {
    /** Every stored count (the read endpoint). */
    read: options.store.read,
    /** Every download, all time, summed again at most every few seconds (the downloads badge). */
    total: options.store.total,
    /** A live JAR answer (sendJar): the software, if any, is the route's. */
    countJar: guarded('downloads', (event: H3Event, versionId: string) => {
      if (!options.enabled) return;
      const software = getRouterParam(event, 'software', { decode: true });
      const field = countField(versionId, software === undefined ? undefined : findSoftware(software));
      countAfter(counting, event, versionId, field);
    }),
    /** A precomputed answer of the static tree: counted when it is a JAR route. */
    countTreeAnswer: guarded('downloads', (event: H3Event, pathname: string, entry: TreeAnswer) => {
      if (!options.enabled) return;
      const target = treeTarget(treeTargets, pathname, entry);
      if (target) countAfter(counting, event, target.versionId, target.field);
    }),
    /** Stores what is queued (tests, and the origin's close). */
    flush: () => flushCounts(pending),
    /** Stops the timer and stores what is queued. */
    async close(): Promise<void> {
      if (pending.timer) clearTimeout(pending.timer);
      await flushCounts(pending);
    },
  };
}
export type DownloadCounter = ReturnType<typeof createDownloadCounter>;
