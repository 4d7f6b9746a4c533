import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { withKeyLock, type Storage } from '../storage.ts';

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

/**
 * Found records are kept this long in memory, so a hot chart reads no storage; short enough that a
 * server the operator removed answers 404 on every origin within a second (issue 29).
 */
const REMEMBER_MS = 500;

export const serverKey = (id: string) => `servers:${id}`;

export function serverStore(storage: Storage) {
  const read = async (id: string) => {
    const record = ServerRecord.safeParse(await storage.getItem(serverKey(id)));
    return record.success ? record.data : null;
  };
  // Not lru-cache's fetch(): a set() (a fresh read, below) while a fetch for the same id is in
  // flight aborts that fetch, and its waiting chart requests answered 500 (seen as the topology test's
  // flake under load).
  const remembered = new LRUCache<string, ServerRecord>({ max: 10_000, ttl: REMEMBER_MS });
  return {
    async add(server: ServerRecord): Promise<void> {
      await storage.setItem(serverKey(server.id), ServerRecord.parse(server));
    },
    /**
     * The server, or null when unknown (or its stored record is unreadable). `fresh`: read from
     * storage, never remembered: ingestion, so a rotated key is refused at once on every origin.
     */
    async get(id: string, { fresh = false }: { fresh?: boolean } = {}): Promise<ServerRecord | null> {
      const known = fresh ? undefined : remembered.get(id);
      if (known) return known;
      const record = await read(id);
      if (record) remembered.set(id, record);
      return record;
    },
    /** Every readable server, oldest first. */
    async list(): Promise<ServerRecord[]> {
      const items = await storage.getItems(await storage.getKeys('servers'));
      return items
        .flatMap(({ value }) => {
          const record = ServerRecord.safeParse(value);
          return record.success ? [record.data] : [];
        })
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    },
    /** Replaces the server's ingest key digest; null when there is no such server. */
    replaceIngestKey(id: string, ingestKeyHash: string): Promise<ServerRecord | null> {
      return withKeyLock(storage, serverKey(id), async () => {
        const record = await read(id);
        if (!record) return null;
        const next = ServerRecord.parse({ ...record, ingestKeyHash });
        await storage.setItem(serverKey(id), next);
        remembered.delete(id);
        return next;
      });
    },
  };
}
export type ServerStore = ReturnType<typeof serverStore>;
