import type { PublishTokenRecord } from '../schema.ts';

/**
 * Publishing tokens, by their digest (test/publish-tokens.test.ts runs this contract against
 * both backends). No copy is kept in memory: a revoked token is refused by the next request on
 * every origin.
 */
export type PublishTokenStore = {
  /** Stores a new token's record; resolves once it is durable. */
  add(record: PublishTokenRecord): Promise<void>;
  /** The record of the token with this digest, or null: one read. */
  find(tokenHash: string): Promise<PublishTokenRecord | null>;
  /** Every token, oldest first. */
  list(): Promise<PublishTokenRecord[]>;
  /** Deletes the token with this id; its record, or null when there was none. */
  revoke(id: string): Promise<PublishTokenRecord | null>;
  /**
   * Sets lastUsedAt to `now` unless it is within LAST_USED_EVERY_MS of it already; never brings a
   * revoked token back (a revoke between the request's read and this write wins).
   */
  markUsed(tokenHash: string, now: number): Promise<void>;
};
