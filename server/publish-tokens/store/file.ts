import { withKeyLock, type Storage } from '../../storage.ts';
import type { PublishTokenStore } from './contract.ts';
import { LAST_USED_EVERY_MS, PublishTokenRecord, publishTokenKey } from '../schema.ts';

/** A stored value as a record; null when absent or not one (a record that does not parse authenticates nobody). */
const parsed = (value: unknown) => PublishTokenRecord.safeParse(value).data ?? null;

/**
 * Every token, oldest first, through the storage layer: files, or Redis (whose driver walks the
 * keys with SCAN), where the records have the same keys and values.
 */
export async function listTokenRecords(storage: Storage): Promise<PublishTokenRecord[]> {
  const records = await Promise.all(
    (await storage.getKeys('publish-tokens')).map(async (key) => parsed(await storage.getItem(key))),
  );
  return records.filter((r) => r !== null).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/**
 * The embedded store's tokens: one file per token, `publish-tokens/<digest>`, each written whole
 * (server/storage.ts writes atomically). The CLI revokes while origins mark tokens used, so both
 * take the record's file lock, and markUsed writes only a record it read under that lock.
 */
export function filePublishTokens(storage: Storage): PublishTokenStore {
  const find = async (tokenHash: string) => parsed(await storage.getItem(publishTokenKey(tokenHash)));
  const list = () => listTokenRecords(storage);
  return {
    async add(record) {
      await storage.setItem(publishTokenKey(record.tokenHash), PublishTokenRecord.parse(record));
    },
    find,
    list,
    async revoke(id) {
      const record = (await list()).find((r) => r.id === id);
      if (!record) return null;
      const key = publishTokenKey(record.tokenHash);
      return withKeyLock(storage, key, async () => {
        if (!(await storage.hasItem(key))) return null;
        await storage.removeItem(key);
        return record;
      });
    },
    async markUsed(tokenHash, now) {
      const key = publishTokenKey(tokenHash);
      await withKeyLock(storage, key, async () => {
        const record = await find(tokenHash);
        if (!record || (record.lastUsedAt !== null && now - Date.parse(record.lastUsedAt) < LAST_USED_EVERY_MS)) return;
        await storage.setItem(key, { ...record, lastUsedAt: new Date(now).toISOString() });
      });
    },
  };
}
