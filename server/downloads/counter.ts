import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { getRouterParam, type H3Event } from 'h3';
import type { ServerRequest } from 'srvx';
import { DAY } from '../duration.ts';
import { guarded } from '../http/after-response.ts';
import { requestClient } from '../http/client-address.ts';
import { throttledLog } from '../throttled-log.ts';
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
  warn?: (line: string) => void;
};

/**
 * Of a precomputed answer's route entry (the tree's RouteEntry), what tells a JAR and its version:
 * its file and its headers. Only these, so counting does not depend on the tree's format.
 */
type TreeAnswer = { file: string; headers: Readonly<Record<string, string>> };

/**
 * Counts JAR downloads after their answer. A JAR answer registers a 'finish' listener on Node's
 * response; once the body has gone out, a GET answered 200 or 206 is queued in memory, and the
 * queue goes to the store in one batch a second, never on a response's path. Only answers Node
 * sends are counted: the build's in-process requests are not downloads. Nothing here throws into
 * an answer; a store that is down keeps the batch (up to MAX_WAITING) for the next flush.
 */
export function createDownloadCounter(options: CounterOptions) {
  const warn = throttledLog(options.warn ?? ((line) => console.warn(line)));
  /** The digests queued since the last flush: a retry or a download manager's range requests are queued once. */
  let queued = new DigestSet();
  let waiting: Counted[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  const queue = (download: Counted) => {
    if (waiting.length >= MAX_WAITING) return warn(`[downloads] ${MAX_WAITING} downloads wait for the store; dropping`);
    waiting.push(download);
    timer ??= setTimeout(() => void flush(), FLUSH_MS).unref();
  };

  const flush = (): Promise<void> => {
    timer = undefined;
    flushing = flushing.then(async () => {
      const batch = waiting;
      waiting = [];
      queued = new DigestSet();
      if (batch.length === 0) return;
      try {
        await options.store.add(batch);
      } catch (error) {
        waiting = [...batch.slice(0, MAX_WAITING - waiting.length), ...waiting];
        warn(`[downloads] could not store ${batch.length} counts; retrying: ${(error as Error).message}`);
        timer ??= setTimeout(() => void flush(), FLUSH_MS).unref();
      }
    });
    return flushing;
  };

  /** Queues a download unless the same client, version and day is queued or known to be counted. */
  const queueOnce = (day: number, versionId: string, field: string, client: string) => {
    const digest = seenDigest(day, versionId, client);
    if (!options.store.isCounted(day, digest) && queued.add(digest))
      queue({ high: digest.high, low: digest.low, day, field });
  };

  /**
   * What each connection had counted last: a repeat on it (a retry, a download manager's range
   * requests on one keep-alive connection) is dropped before its client is even resolved.
   */
  const lastOnConnection = new WeakMap<Socket, { day: number; field: string; forwardedFor: unknown }>();

  /** Counts the answer once Node has sent it, if it is a GET answered 200 or 206. */
  const countAfter = (event: H3Event, versionId: string, field: string) => {
    if (event.req.method !== 'GET') return;
    const node = (event.req as ServerRequest).runtime?.node;
    const res = node?.res as ServerResponse | undefined;
    const socket = node?.req.socket;
    if (!res || !socket) return;
    const day = Math.floor(options.now() / DAY);
    const forwardedFor = node!.req.headers['x-forwarded-for'];
    const last = lastOnConnection.get(socket);
    if (last && last.day === day && last.field === field && last.forwardedFor === forwardedFor) return;
    const { key } = requestClient(event, options.trustProxy);
    res.once(
      'finish',
      guarded('downloads', () => {
        if (res.statusCode !== 200 && res.statusCode !== 206) return;
        lastOnConnection.set(socket, { day, field, forwardedFor });
        queueOnce(day, versionId, field, key);
      }),
    );
  };

  /** What a tree's JAR route counts under (null: not a JAR route), worked out once per route of a tree. */
  const treeTargets = new WeakMap<TreeAnswer, { versionId: string; field: string } | null>();
  const treeTarget = (pathname: string, entry: TreeAnswer) => {
    let target = treeTargets.get(entry);
    if (target !== undefined) return target;
    const match = entry.file.endsWith('.jar') ? matchJarRoute(pathname) : undefined;
    const versionId = match && (match.id ?? locationId(entry.headers['content-location']));
    const software = match?.software === undefined ? undefined : findSoftware(decodeURIComponent(match.software));
    target = versionId ? { versionId, field: countField(versionId, software) } : null;
    treeTargets.set(entry, target);
    return target;
  };

  return {
    /** Every stored count (the read endpoint). */
    read: options.store.read,
    /** Every download, all time, summed again at most every few seconds (the downloads badge). */
    total: options.store.total,
    /** A live JAR answer (sendJar): the software, if any, is the route's. */
    countJar: guarded('downloads', (event: H3Event, versionId: string) => {
      if (!options.enabled) return;
      const software = getRouterParam(event, 'software', { decode: true });
      countAfter(event, versionId, countField(versionId, software === undefined ? undefined : findSoftware(software)));
    }),
    /** A precomputed answer of the static tree: counted when it is a JAR route. */
    countTreeAnswer: guarded('downloads', (event: H3Event, pathname: string, entry: TreeAnswer) => {
      if (!options.enabled) return;
      const target = treeTarget(pathname, entry);
      if (target) countAfter(event, target.versionId, target.field);
    }),
    /** Stores what is queued (tests, and the origin's close). */
    flush,
    /** Stops the timer and stores what is queued. */
    async close(): Promise<void> {
      if (timer) clearTimeout(timer);
      await flush();
    },
  };
}
export type DownloadCounter = ReturnType<typeof createDownloadCounter>;
