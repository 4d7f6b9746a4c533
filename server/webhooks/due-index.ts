import type { Redis } from 'ioredis';
import { StorageUnavailableError, redisKey, unavailable, type Storage } from '../storage.ts';
import { DeliveryId, WebhookId } from './schema.ts';

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

/** Milliseconds padded to a fixed width, so file names sort by time (13 digits last until the year 2286). */
const paddedTime = (ms: number) => String(Math.max(0, Math.round(ms))).padStart(13, '0');

/**
 * The file store's index: an empty record per entry named `webhook-due:<webhook>:<time>-<delivery>`,
 * so listing one folder gives the order without reading any entry. Writes land before the
 * outbox entry changes (moved) or after it is gone (removed), never losing a due entry.
 */
export function fileDueIndex(storage: Storage): DueIndex {
  const keyOf = (entry: DueEntry) => `webhook-due:${entry.webhookId}:${paddedTime(entry.due)}-${entry.id}`;
  const entries = async (prefix = 'webhook-due'): Promise<DueEntry[]> =>
    (await storage.getKeys(prefix)).flatMap((key) => {
      const [, webhookId, name] = key.split(':');
      const match = /^(\d{13})-(.+)$/.exec(name ?? '');
      if (!match || !WebhookId.safeParse(webhookId).success || !DeliveryId.safeParse(match[2]).success) return [];
      return [{ webhookId: webhookId!, id: match[2]!, due: Number(match[1]) }];
    });
  const remove = (entry: DueEntry) => storage.removeItem(keyOf(entry));
  return {
    add: (entry) => storage.setItem(keyOf(entry), ''),
    async move(entry, due) {
      if (due === entry.due) return;
      await storage.setItem(keyOf({ ...entry, due }), '');
      await remove(entry);
    },
    remove,
    async due(now, limit) {
      const byWebhook = new Map<string, DueEntry[]>();
      for (const entry of await entries()) {
        if (entry.due > now) continue;
        byWebhook.set(entry.webhookId, [...(byWebhook.get(entry.webhookId) ?? []), entry]);
      }
      for (const [webhookId, list] of byWebhook)
        byWebhook.set(webhookId, list.sort((a, b) => a.due - b.due || a.id.localeCompare(b.id)).slice(0, limit));
      return byWebhook;
    },
    async indexedIds(webhookIds) {
      const wanted = new Set(webhookIds);
      return new Set((await entries()).filter((e) => wanted.has(e.webhookId)).map((e) => e.id));
    },
    async forget(webhookId) {
      for (const entry of await entries(`webhook-due:${webhookId}`)) await remove(entry);
    },
  };
}

/**
 * Redis: one sorted set per webhook, `depot:webhook-due:<webhook>`, delivery ids scored by their
 * time (a move is one ZADD), and the set of webhooks that have one, `depot:webhook-due-webhooks`,
 * so a poll costs a command per webhook and never a scan of the keyspace.
 */
export function redisDueIndex(redis: Redis): DueIndex {
  const setOf = (webhookId: string) => redisKey(`webhook-due:${webhookId}`);
  const WEBHOOKS = redisKey('webhook-due-webhooks');
  const replies = async (pipeline: ReturnType<Redis['pipeline']>) => {
    const answers = (await pipeline.exec().catch(unavailable)) ?? [];
    return answers.map(([error, reply]) => {
      if (error) throw new StorageUnavailableError(error);
      return reply as string[];
    });
  };
  const add = async (entry: DueEntry, due = entry.due) => {
    await redis
      .multi()
      .zadd(setOf(entry.webhookId), due, entry.id)
      .sadd(WEBHOOKS, entry.webhookId)
      .exec()
      .catch(unavailable);
  };
  return {
    add: (entry) => add(entry),
    move: (entry, due) => add(entry, due),
    async remove(entry) {
      await redis.zrem(setOf(entry.webhookId), entry.id).catch(unavailable);
    },
    async due(now, limit) {
      const webhookIds = await redis.smembers(WEBHOOKS).catch(unavailable);
      const pipeline = redis.pipeline();
      for (const id of webhookIds) pipeline.zrangebyscore(setOf(id), '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit);
      const byWebhook = new Map<string, DueEntry[]>();
      for (const [index, flat] of (await replies(pipeline)).entries()) {
        const webhookId = webhookIds[index]!;
        const list: DueEntry[] = [];
        for (let i = 0; i + 1 < flat.length; i += 2) list.push({ webhookId, id: flat[i]!, due: Number(flat[i + 1]) });
        if (list.length > 0) byWebhook.set(webhookId, list);
      }
      return byWebhook;
    },
    async indexedIds(webhookIds) {
      const pipeline = redis.pipeline();
      for (const id of webhookIds) pipeline.zrange(setOf(id), 0, -1);
      return new Set((await replies(pipeline)).flat());
    },
    async forget(webhookId) {
      await redis.multi().del(setOf(webhookId)).srem(WEBHOOKS, webhookId).exec().catch(unavailable);
    },
  };
}
