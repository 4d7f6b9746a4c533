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

export function serverStore(storage: Storage) {
  return {
    async add(server: ServerRecord): Promise<void> {
      await storage.setItem(`servers:${server.id}`, ServerRecord.parse(server));
    },
    /** The server, or null when unknown (or its stored record is unreadable). */
    async get(id: string): Promise<ServerRecord | null> {
      const record = ServerRecord.safeParse(await storage.getItem(`servers:${id}`));
      return record.success ? record.data : null;
    },
  };
}
export type ServerStore = ReturnType<typeof serverStore>;
