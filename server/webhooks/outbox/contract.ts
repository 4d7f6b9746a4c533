import type { Delivery } from '../schema.ts';

/** An outbox entry as the due index files it: its webhook, its id, and when it is next due (ms). */
export type DueEntry = { webhookId: string; id: string; due: number };

/**
 * Outbox entries by the time of their next attempt, per webhook, so the delivery loop reads only
 * what is due and each webhook's earliest first, whatever waits behind it. A hint, not the
 * record: the outbox entry decides, an entry missing from the index is filed again by
 * `reconcile` (webhookStore), and one whose time is stale is moved when it is picked.
 */
export type DueIndex = {
  add(entry: DueEntry): Promise<void>;
  /** Files `entry` under `due` instead of `entry.due`. */
  move(entry: DueEntry, due: number): Promise<void>;
  remove(entry: DueEntry): Promise<void>;
  /** Per webhook, up to `limit` entries due by `now`, earliest first. */
  due(now: number, limit: number): Promise<Map<string, DueEntry[]>>;
  /** The delivery ids the index holds for these webhooks. */
  indexedIds(webhookIds: string[]): Promise<Set<string>>;
  /** Everything of a removed webhook. */
  forget(webhookId: string): Promise<void>;
};

/**
 * A delivery's lease: the right to make its next attempt, or null when another origin (or `depot
 * webhook test`) holds it. Released by calling what it resolves.
 */
export type ClaimDelivery = (
  delivery: Pick<Delivery, 'webhookId' | 'id'>,
  ms: number,
) => Promise<(() => Promise<void>) | null>;

/** What differs between the webhook store's backends (file.ts, redis.ts): the due index and the lease. */
export type OutboxBackend = { index: DueIndex; claim: ClaimDelivery };
