import { withKeyLock, type Storage } from '../../storage.ts';

/** The embedded store: the stored key under its file lock, which the CLI takes too; written only if absent. */
export function fileUrlKey(storage: Storage, key: string) {
  return {
    keepFirst: (fresh: string): Promise<unknown> =>
      withKeyLock(storage, key, async () => {
        const existing = await storage.getItem(key);
        if (existing !== null) return existing;
        await storage.setItem(key, fresh);
        return fresh;
      }),
  };
}
