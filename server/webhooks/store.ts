import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describeIssues } from '../helpers/describe-issues.ts';
import type { Storage } from '../storage.ts';
import type { ClaimDelivery, DueEntry, DueIndex } from './outbox/contract.ts';
import { logKey, outboxKey, webhookKey } from './keys.ts';
import { Delivery, DeliveryId, WebhookId, WebhookRecord, type DeliveryEvent } from './schema.ts';
import { fileOutbox } from './outbox/file.ts';
import { redisOutbox } from './outbox/redis.ts';

export { outboxKey };

/** Finished deliveries kept per webhook for `depot webhook list`; older ones are deleted. */
const KEPT_DELIVERIES = 20;
/** Attempts kept per delivery (the count goes on). */
export const RECENT_ATTEMPTS = 10;

const lastPart = (key: string) => key.slice(key.lastIndexOf(':') + 1);
/** Where a delivery sits in the due index. */
const dueEntry = (d: Pick<Delivery, 'webhookId' | 'id' | 'nextAttemptAt'>): DueEntry => ({
  webhookId: d.webhookId,
  id: d.id,
  due: Date.parse(d.nextAttemptAt),
});

/** Delivery ids sort by creation: `delivery-<ms>-<random>`. */
function newDeliveryId(now: number): string {
  return `delivery-${String(now).padStart(13, '0')}-${randomBytes(6).toString('hex')}`;
}

/** Webhooks, their outbox and their delivery log, as the CLI and the delivery loop use them. */
export type WebhookStore = {
  add(webhook: WebhookRecord): Promise<void>;
  get(id: string): Promise<WebhookRecord | null>;
  /** Every webhook, oldest first. */
  list(): Promise<WebhookRecord[]>;
  /** The webhook, then its pending and finished deliveries; false when there was none. */
  remove(id: string): Promise<boolean>;
  /** One outbox entry, due at once; written (atomically) before anyone attempts it. */
  enqueue(webhookId: string, payload: DeliveryEvent, now: number): Promise<Delivery>;
  /** Outbox keys, oldest delivery first. */
  pendingKeys(): Promise<string[]>;
  /** Per webhook, up to `limit` entries due by `now`, earliest first (from the index: no entry is read). */
  dueEntries(now: number, limit: number): Promise<Map<string, DueEntry[]>>;
  /** A delivery; null when it is gone. One that does not parse is an error, left in place for a person to look at. */
  readDelivery(key: string): Promise<Delivery | null>;
  /** A pending entry after a failed attempt, due again at its new `nextAttemptAt` (it was due at `previous`'s). */
  reschedule(delivery: Delivery, previous: Pick<Delivery, 'nextAttemptAt'>): Promise<void>;
  /**
   * An index entry that was picked but not attempted, put right: removed when its delivery is
   * gone, moved when the delivery is due at another time (a crash between the two writes).
   */
  healIndex(entry: DueEntry): Promise<void>;
  /**
   * Files every outbox entry the index misses (written by a depot before the index, migrated,
   * or a crash between the entry and its index); returns the keys of entries that do not parse,
   * left in place for a person to look at.
   */
  reconcileIndex(): Promise<{ filed: number; unreadable: string[] }>;
  /** Was this delivery finished already (a crash between writing the log and removing the outbox entry)? */
  isFinished(delivery: Delivery): Promise<boolean>;
  /** An outbox entry that is not to be sent: its webhook is gone, or it was finished already. */
  drop(delivery: Pick<Delivery, 'webhookId' | 'id' | 'nextAttemptAt'>): Promise<void>;
  /** Delivered or given up: into the log first, then out of the outbox; the log is cut to KEPT_DELIVERIES. */
  finish(delivery: Delivery): Promise<void>;
  /** A webhook's pending and finished deliveries, oldest first. */
  deliveries(webhookId: string): Promise<{ pending: Delivery[]; finished: Delivery[] }>;
  /**
   * The lease on one delivery's next attempt, or null when another origin (or `depot webhook
   * test`) holds it; an origin killed mid-attempt lets another retry once it lapses.
   */
  claim: ClaimDelivery;
};

/**
 * Webhooks and their outbox in the state store (files or Redis): `webhooks:<id>` the webhook with
 * its secret; `webhook-outbox:<webhook>:<delivery>` a delivery still to make, written before any
 * attempt; `webhook-log:<webhook>:<delivery>` a finished one, the last KEPT_DELIVERIES per webhook.
 * An outbox entry is only rewritten by the holder of its lease, so no two writers race on it.
 * The due index files each entry by its next attempt; it is written after the entry and removed
 * after it, so at worst it names an entry that is gone or due at another time (put right when
 * picked: healIndex) or misses one a crash left unfiled (filed by reconcileIndex). The records go
 * through the storage whichever the backend; the due index and the lease are the backend's own
 * (outbox/file.ts, outbox/redis.ts), behind the same contract (test/store-contract.ts).
 */
export function webhookStore(storage: Storage, redis?: Redis): WebhookStore {
  const { index, claim } = redis ? redisOutbox(redis) : fileOutbox(storage);
  return { ...webhookRecords(storage, index), ...outbox(storage, index), claim };
}

/** The webhooks themselves. */
function webhookRecords(storage: Storage, index: DueIndex) {
  const get = async (id: string): Promise<WebhookRecord | null> => {
    const parsed = WebhookRecord.safeParse(await storage.getItem(webhookKey(id)));
    return parsed.success ? parsed.data : null;
  };
  return {
    async add(webhook: WebhookRecord): Promise<void> {
      await storage.setItem(webhookKey(webhook.id), WebhookRecord.parse(webhook));
    },
    get,
    async list(): Promise<WebhookRecord[]> {
      const keys = (await storage.getKeys('webhooks')).sort();
      const records = await Promise.all(keys.map((key) => get(lastPart(key))));
      return records.filter((r) => r !== null).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },
    // An origin holding one of its deliveries finishes its attempt.
    async remove(id: string): Promise<boolean> {
      if (!(await storage.hasItem(webhookKey(id)))) return false;
      await storage.removeItem(webhookKey(id));
      for (const prefix of [`webhook-outbox:${id}`, `webhook-log:${id}`])
        for (const key of await storage.getKeys(prefix)) await storage.removeItem(key);
      await index.forget(id);
      return true;
    },
  };
}

/** The outbox and the log of deliveries, with the due index kept beside them. */
function outbox(storage: Storage, index: DueIndex): Omit<WebhookStore, 'add' | 'get' | 'list' | 'remove' | 'claim'> {
  const readDelivery = (key: string) => readStoredDelivery(storage, key);
  const readAll = async (prefix: string) =>
    (
      await Promise.all((await storage.getKeys(prefix)).sort().map((key) => readDelivery(key).catch(() => null)))
    ).filter((d) => d !== null);
  return {
    async enqueue(webhookId, payload, now) {
      const at = new Date(now).toISOString();
      const delivery: Delivery = {
        id: newDeliveryId(now),
        webhookId,
        payload,
        createdAt: at,
        state: 'pending',
        nextAttemptAt: at,
        attempts: 0,
        recent: [],
      };
      await storage.setItem(outboxKey(delivery), delivery);
      await index.add(dueEntry(delivery));
      return delivery;
    },
    pendingKeys: async () => oldestFirst(await storage.getKeys('webhook-outbox')),
    dueEntries: (now, limit) => index.due(now, limit),
    readDelivery,
    async reschedule(delivery, previous) {
      await storage.setItem(outboxKey(delivery), delivery);
      await index.move(dueEntry({ ...delivery, ...previous }), Date.parse(delivery.nextAttemptAt));
    },
    async healIndex(entry) {
      const delivery = await readDelivery(outboxKey(entry));
      if (delivery === null) await index.remove(entry);
      // Only when it differs: another origin may be moving it right now (Redis: a ZADD of ours would undo theirs).
      else if (Date.parse(delivery.nextAttemptAt) !== entry.due)
        await index.move(entry, Date.parse(delivery.nextAttemptAt));
    },
    reconcileIndex: () => reconcileIndex(storage, index),
    isFinished: (delivery) => storage.hasItem(logKey(delivery)),
    async drop(delivery) {
      await storage.removeItem(outboxKey(delivery));
      await index.remove(dueEntry(delivery));
    },
    async finish(delivery) {
      await storage.setItem(logKey(delivery), delivery);
      await storage.removeItem(outboxKey(delivery));
      await index.remove(dueEntry(delivery));
      const kept = oldestFirst(await storage.getKeys(`webhook-log:${delivery.webhookId}`));
      for (const key of kept.slice(0, -KEPT_DELIVERIES)) await storage.removeItem(key);
    },
    deliveries: async (webhookId) => ({
      pending: await readAll(`webhook-outbox:${webhookId}`),
      finished: await readAll(`webhook-log:${webhookId}`),
    }),
  };
}

async function readStoredDelivery(storage: Storage, key: string): Promise<Delivery | null> {
  const value = await storage.getItem(key);
  if (value === null) return null;
  const parsed = Delivery.safeParse(value);
  if (!parsed.success) throw new Error(`${key} is not a readable delivery: ${describeIssues(parsed.error.issues)}`);
  return parsed.data;
}

async function reconcileIndex(storage: Storage, index: DueIndex): Promise<{ filed: number; unreadable: string[] }> {
  const listed = (await storage.getKeys('webhook-outbox')).flatMap((key) => {
    const [, webhookId, id] = key.split(':');
    return WebhookId.safeParse(webhookId).success && DeliveryId.safeParse(id).success
      ? [{ key, webhookId: webhookId!, id: id! }]
      : [];
  });
  const indexed = await index.indexedIds([...new Set(listed.map((e) => e.webhookId))]);
  const result = { filed: 0, unreadable: [] as string[] };
  for (const { key, id } of listed) {
    if (indexed.has(id)) continue;
    const delivery = await readStoredDelivery(storage, key).catch(() => undefined);
    if (delivery === undefined) result.unreadable.push(key);
    else if (delivery !== null) {
      await index.add(dueEntry(delivery));
      result.filed++;
    }
  }
  return result;
}

/** Delivery keys in the order their deliveries were made (ids start with their time). */
const oldestFirst = (keys: string[]) => keys.sort((a, b) => lastPart(a).localeCompare(lastPart(b)));
