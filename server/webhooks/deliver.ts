import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import pLimit from 'p-limit';
import { throttledLog } from '../throttled-log.ts';
import { renderDelivery } from './payload.ts';
import {
  DEFAULT_ATTEMPT_TIMEOUT_MS,
  DEFAULT_RETRY_BASE_MS,
  DELIVERY_WINDOW_MS,
  nextAttemptAt,
  retryAfterMs,
} from './retry.ts';
import type { Attempt, Delivery } from './schema.ts';
import { RECENT_ATTEMPTS, type WebhookStore } from './store.ts';

export type DeliveryOptions = {
  /** PUBLIC_URL: download links in Discord messages are absolute. */
  publicUrl: string;
  now: () => number;
  /** WEBHOOK_RETRY_BASE_MS: the first retry's delay, doubling (tests shorten it). */
  retryBaseMs?: number;
  timeoutMs?: number;
  warn: (line: string) => void;
  /**
   * Does the tree this origin serves have this version? A release is announced only by an origin
   * that serves it (with a CI release, the tree reaches the origins after the outbox entry).
   */
  serves?: (versionId: string) => boolean;
};

/** What became of one look at an outbox entry. */
export type AttemptResult = 'delivered' | 'retry' | 'failed' | 'skipped';

/** How often the outbox is looked at (at most; shorter when retries are shorter). */
const POLL_MS = 1000;
/** Entries looked at per round, and attempts in flight at once. */
const ROUND_LIMIT = 100;
const PARALLEL_ATTEMPTS = 4;

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
    if (delivery.payload.event === 'release' && options.serves && !options.serves(delivery.payload.version.id))
      return 'skipped';
    const { body, headers } = renderDelivery(delivery, webhook, options.publicUrl);
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
  await store.save({ ...done, nextAttemptAt: new Date(next).toISOString() });
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
 * The origin's delivery loop: every second (or retry base, when shorter) it looks at the outbox
 * and attempts what is due, a few at a time. Nothing in it can stop the process: a failure (the
 * store unreachable) is said at most once a minute and the next round tries again.
 */
export function startDeliveryLoop(store: WebhookStore, options: DeliveryOptions): DeliveryLoop {
  const stopping = new AbortController();
  const report = throttledLog(options.warn);
  const limit = pLimit(PARALLEL_ATTEMPTS);
  const pollMs = Math.min(POLL_MS, options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS);
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();

  const runRound = async () => {
    try {
      const keys = (await store.pendingKeys()).slice(0, ROUND_LIMIT);
      await Promise.all(
        keys.map((key) =>
          limit(async () => {
            if (stopping.signal.aborted) return;
            await attemptDelivery(store, key, options, stopping.signal).catch((error: unknown) =>
              report(`[webhooks] delivery ${key.split(':').at(-1)} not attempted: ${(error as Error).message}`),
            );
          }),
        ),
      );
    } catch (error) {
      report(
        `[webhooks] could not read the outbox; trying again (said at most once a minute): ${(error as Error).message}`,
      );
    }
  };
  const schedule = () => {
    if (stopping.signal.aborted) return;
    timer = setTimeout(() => {
      round = runRound()
        .catch(() => {})
        .then(schedule);
    }, pollMs);
  };
  // Even a throw from the report itself ends no more than this round.
  round = runRound()
    .catch(() => {})
    .then(schedule);

  return {
    stop: async () => {
      stopping.abort();
      clearTimeout(timer);
      await round.catch(() => {});
    },
  };
}
