import { tryKeyLock, type Storage } from '../../storage.ts';
import type { DueEntry, DueIndex, OutboxBackend } from './contract.ts';
import { outboxKey } from '../keys.ts';
import { DeliveryId, WebhookId } from '../schema.ts';

/**
 * The embedded store's outbox: its due index in files, and a delivery's lease is its outbox
 * entry's lock file, taken over 2 s after its holder died.
 */
export function fileOutbox(storage: Storage): OutboxBackend {
  return {
    index: fileDueIndex(storage),
    claim: (delivery) => tryKeyLock(storage, outboxKey(delivery)),
  };
}

/** Milliseconds padded to a fixed width, so file names sort by time (13 digits last until the year 2286). */
const paddedTime = (ms: number) => String(Math.max(0, Math.round(ms))).padStart(13, '0');

/**
 * The file store's index: an empty record per entry named `webhook-due:<webhook>:<time>-<delivery>`,
 * so listing one folder gives the order without reading any entry. Writes land before the
 * outbox entry changes (moved) or after it is gone (removed), never losing a due entry.
 */
function fileDueIndex(storage: Storage): DueIndex {
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
        const list = byWebhook.get(entry.webhookId);
        if (list) list.push(entry);
        else byWebhook.set(entry.webhookId, [entry]);
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
