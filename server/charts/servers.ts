import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { Storage } from '../storage.ts';

/** SPEC 2.10: a game server whose player counts are charted. */
export const ServerRecord = z.strictObject({
  id: z.uuid(),
  owner: z.string().min(1),
  private: z.boolean(),
  name: z.string().max(100).optional(),
  ingestKeyHash: z.string().regex(/^[0-9a-f]{64}$/),
  createdAt: z.iso.datetime(),
});
export type ServerRecord = z.infer<typeof ServerRecord>;

/** Found records are kept this long in memory: a chart answer from cache then reads no storage. */
const REMEMBER_MS = 10_000;

export function serverStore(storage: Storage) {
  const remembered = new LRUCache<string, ServerRecord>({ max: 10_000, ttl: REMEMBER_MS });
  return {
    async add(server: ServerRecord): Promise<void> {
      await storage.setItem(`servers:${server.id}`, ServerRecord.parse(server));
    },
    /** The server, or null when unknown (or its stored record is unreadable). */
    async get(id: string): Promise<ServerRecord | null> {
      const known = remembered.get(id);
      if (known) return known;
      const record = ServerRecord.safeParse(await storage.getItem(`servers:${id}`));
      if (!record.success) return null;
      remembered.set(id, record.data);
      return record.data;
    },
  };
}
export type ServerStore = ReturnType<typeof serverStore>;
