import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Log } from '../helpers/log.ts';
import { throttledLog } from '../helpers/throttled-log.ts';
import type { ProjectRecord } from '../project/schema.ts';
import { renderDelivery } from './payload.ts';
import {
  DEFAULT_ATTEMPT_TIMEOUT_MS,
  DEFAULT_RETRY_BASE_MS,
  DELIVERY_WINDOW_MS,
  nextAttemptAt,
  retryAfterMs,
} from './retry.ts';
import type { Attempt, Delivery, DeliveryEvent } from './schema.ts';
import type { DueEntry } from './outbox/contract.ts';
import { RECENT_ATTEMPTS, outboxKey, type WebhookStore } from './store.ts';

export type DeliveryOptions = {
  /** PUBLIC_URL: download links in Discord messages are absolute. */
  publicUrl: string;
  now: () => number;
  /** WEBHOOK_RETRY_BASE_MS: the first retry's delay, doubling (tests shorten it). */
  retryBaseMs?: number;
  timeoutMs?: number;
  /**
   * The version as the tree this origin serves holds it (undefined when it has none): a change is
   * announced only by an origin that serves it (announcementServed), since with a CI release the
   * tree reaches the origins after the outbox entry.
   */
  servedVersion?: (versionId: string) => { withdrawn?: unknown } | undefined;
  /** The project of the tree this origin serves (data/project.json): Discord messages carry it as author. */
  servedProject?: () => ProjectRecord | undefined;
};

/**
 * Does the served tree show what the delivery announces? A release: the tree has the version; a
 * withdraw: it has the version withdrawn. A test announces nothing and is always sent.
 */
function announcementServed(
  payload: DeliveryEvent,
  servedVersion: NonNullable<DeliveryOptions['servedVersion']>,
): boolean {
  if (payload.event === 'ping') return true;
  const served = servedVersion(payload.version.id);
  if (payload.event === 'withdraw') return served?.withdrawn !== undefined;
  return served !== undefined;
}

/** What became of one look at an outbox entry. */
export type AttemptResult = 'delivered' | 'retry' | 'failed' | 'skipped';

/** How often the due index is looked at (at most; shorter when retries are shorter). */
const POLL_MS = 1000;
/** Due entries one webhook's turn attempts, one after another, before its next turn. */
const TURN_LIMIT = 50;
/** Webhooks whose turns run at once (each has at most one attempt in flight). */
const PARALLEL_WEBHOOKS = 8;
/** How often outbox entries missing from the due index are looked for (and at start). */
const RECONCILE_MS = 60_000;

/**
 * One attempt of one delivery, under its lease: the entry is read again once the lease is held
 * (another origin may have just attempted it), sent, and its outcome written before the lease is
 * let go. An attempt cut short by `stop` writes nothing: the entry stays due and is sent again,
 * with the same delivery id (at least once).
 */
export async function attemptDelivery(
  store: WebhookStore,
  key: string,
  options: DeliveryOptions,
  stop: AbortSignal = new AbortController().signal,
): Promise<AttemptResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  const listed = await store.readDelivery(key);
  if (!listed || Date.parse(listed.nextAttemptAt) > options.now()) return 'skipped';
  // The lease outlives the attempt's timeout and the write of its outcome.
  const release = await store.claim(listed, timeoutMs * 2 + 5000);
  if (!release) return 'skipped';
  try {
    const delivery = await store.readDelivery(key);
    if (!delivery || Date.parse(delivery.nextAttemptAt) > options.now()) return 'skipped';
    const webhook = await store.get(delivery.webhookId);
    // Its webhook was removed, or a crash came between logging it finished and leaving the outbox.
    if (!webhook || (await store.isFinished(delivery))) {
      await store.drop(delivery);
      return 'skipped';
    }
    const createdAt = Date.parse(delivery.createdAt);
    const startedAt = options.now();
    if (startedAt > createdAt + DELIVERY_WINDOW_MS) {
      // No origin ran for a day, or the store was unreachable: an announcement that late is not sent.
      const at = new Date(startedAt).toISOString();
      const note: Attempt = { at, error: 'not attempted: older than 24 hours', ms: 0 };
      await store.finish({
        ...delivery,
        state: 'failed',
        finishedAt: at,
        recent: [...delivery.recent, note].slice(-RECENT_ATTEMPTS),
      });
      return 'failed';
    }
    if (options.servedVersion && !announcementServed(delivery.payload, options.servedVersion)) return 'skipped';
    const { body, headers } = renderDelivery(delivery, webhook, options.publicUrl, options.servedProject?.());
    const answer = await post(webhook.url, body, headers, AbortSignal.any([AbortSignal.timeout(timeoutMs), stop]));
    if (stop.aborted) return 'skipped';
    return await recordAttempt(store, delivery, answer, { ...options, startedAt });
  } finally {
    await release();
  }
}

/** An attempt's outcome onto its entry: delivered (into the log), retried later, or given up after 24 hours. */
async function recordAttempt(
  store: WebhookStore,
  delivery: Delivery,
  answer: Answer,
  options: DeliveryOptions & { startedAt: number },
): Promise<AttemptResult> {
  const at = options.now();
  const attempt: Attempt = {
    at: new Date(at).toISOString(),
    ...('status' in answer ? { status: answer.status } : { error: answer.error }),
    ms: Math.max(0, Math.round(at - options.startedAt)),
  };
  const done = {
    ...delivery,
    attempts: delivery.attempts + 1,
    recent: [...delivery.recent, attempt].slice(-RECENT_ATTEMPTS),
  };
  if ('status' in answer && answer.status >= 200 && answer.status < 300) {
    await store.finish({ ...done, state: 'delivered', finishedAt: attempt.at });
    return 'delivered';
  }
  const next = nextAttemptAt(done.attempts, {
    createdAt: Date.parse(delivery.createdAt),
    now: at,
    baseMs: options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS,
    retryAfterMs: 'status' in answer ? answer.retryAfterMs : 0,
  });
  if (next === null) {
    await store.finish({ ...done, state: 'failed', finishedAt: attempt.at });
    return 'failed';
  }
  await store.reschedule({ ...done, nextAttemptAt: new Date(next).toISOString() }, delivery);
  return 'retry';
}

type Answer = { status: number; retryAfterMs: number } | { error: string };

/**
 * One POST over node:http(s), a connection of its own; the status line is the answer (the body is
 * not waited for). Redirects are not followed: a 3xx is a failure, as GitHub's webhooks treat it.
 */
function post(url: string, body: string, headers: Record<string, string>, signal: AbortSignal): Promise<Answer> {
  return new Promise((resolve) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      target,
      { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, signal, agent: false },
      (response) => {
        response.resume().on('error', () => {});
        const retryAfter = response.headers['retry-after'];
        resolve({ status: response.statusCode ?? 0, retryAfterMs: retryAfterMs(retryAfter ?? null) });
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      const timedOut = signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError';
      resolve({ error: (timedOut ? 'timed out' : (error.code ?? error.message)).slice(0, 300) });
    });
    request.end(body);
  });
}

export type DeliveryLoop = { stop: () => Promise<void> };

/**
 * The origin's delivery loop: every second (or retry base, when shorter) it reads what is due from
 * the due index and gives each webhook a turn of its own: its due entries, earliest first, one
 * attempt at a time. A webhook's turn runs apart from the others' and the next poll does not wait
 * for it, so a receiver that hangs or fails holds up only its own deliveries; with more webhooks
 * due than PARALLEL_WEBHOOKS, turns go round-robin. Nothing in it can stop the process: a failure
 * (the store unreachable) is said at most once a minute and the next poll tries again.
 */
export function startDeliveryLoop(store: WebhookStore, options: DeliveryOptions & { log: Log }): DeliveryLoop {
  const stopping = new AbortController();
  const report = throttledLog((line) => options.log.warn(line));
  const reportUnreadable = throttledLog((line) => options.log.warn(line));
  const pollMs = Math.min(POLL_MS, options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS);
  /** Webhooks taking their turn now. */
  const turns = new Map<string, Promise<void>>();
  /** Where the next round-robin starts among the due webhooks. */
  let nextFirst = 0;
  let reconciledAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  let poll: Promise<void> = Promise.resolve();

  const takeTurn = async (entries: DueEntry[]) => {
    for (const entry of entries) {
      if (stopping.signal.aborted) return;
      try {
        const result = await attemptDelivery(store, outboxKey(entry), options, stopping.signal);
        // Not attempted: the index may name a delivery that is gone or due at another time.
        if (result === 'skipped' && !stopping.signal.aborted) await store.healIndex(entry);
      } catch (error) {
        report(`[webhooks] delivery ${entry.id} not attempted: ${(error as Error).message}`);
      }
    }
  };

  const runPoll = async () => {
    try {
      if (performance.now() - reconciledAt >= RECONCILE_MS) {
        const { unreadable } = await store.reconcileIndex();
        reconciledAt = performance.now();
        if (unreadable.length > 0)
          reportUnreadable(
            `[webhooks] ${unreadable.length} outbox entries do not parse and are left for a person to look at (said at most once a minute): ${unreadable.slice(0, 3).join(', ')}`,
          );
      }
      const due = await store.dueEntries(options.now(), TURN_LIMIT);
      const waiting = [...due.keys()].filter((webhookId) => !turns.has(webhookId)).sort();
      const first = waiting.length > 0 ? nextFirst % waiting.length : 0;
      const order = [...waiting.slice(first), ...waiting.slice(0, first)];
      for (const webhookId of order) {
        if (turns.size >= PARALLEL_WEBHOOKS || stopping.signal.aborted) break;
        nextFirst++;
        const turn = takeTurn(due.get(webhookId)!).finally(() => turns.delete(webhookId));
        turns.set(webhookId, turn);
      }
    } catch (error) {
      report(
        `[webhooks] could not read the outbox; trying again (said at most once a minute): ${(error as Error).message}`,
      );
    }
  };
  const schedule = () => {
    if (stopping.signal.aborted) return;
    timer = setTimeout(() => {
      poll = runPoll()
        .catch(() => {})
        .then(schedule);
    }, pollMs);
  };
  // Even a throw from the report itself ends no more than this poll.
  poll = runPoll()
    .catch(() => {})
    .then(schedule);

  return {
    stop: async () => {
      stopping.abort();
      clearTimeout(timer);
      await poll.catch(() => {});
      await Promise.all(turns.values());
    },
  };
}
