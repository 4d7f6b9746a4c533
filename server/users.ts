import { z } from 'zod';
import { hashSecret, secretMatches } from './http/auth.ts';
import type { Storage } from './storage.ts';

/** What storage holds per token (exported for `depot migrate`, which checks every record it copies). */
export const TokenRecord = z.object({ username: z.string().min(1), tokenHash: z.string().regex(/^[0-9a-f]{64}$/) });

/** Users' API tokens, as digests only: `user-tokens:<digest>` -> the username it authenticates. */
export function userTokenStore(storage: Storage) {
  return {
    async add(username: string, token: string): Promise<void> {
      await storage.setItem(`user-tokens:${hashSecret(token)}`, { username, tokenHash: hashSecret(token) });
    },
    /** The username a token authenticates, or null. */
    async authenticate(token: string): Promise<string | null> {
      const record = TokenRecord.safeParse(await storage.getItem(`user-tokens:${hashSecret(token)}`));
      return record.success && secretMatches(record.data.tokenHash, token) ? record.data.username : null;
    },
    /** Removes every token of `username` (its removal); answers how many there were. */
    async removeUser(username: string): Promise<number> {
      const items = await storage.getItems(await storage.getKeys('user-tokens'));
      const theirs = items.filter(({ value }) => TokenRecord.safeParse(value).data?.username === username);
      for (const { key } of theirs) await storage.removeItem(key);
      return theirs.length;
    },
  };
}
export type UserTokenStore = ReturnType<typeof userTokenStore>;
