import { sha256Hex } from '../../helpers/digest.ts';

/** An ingestion's Idempotency-Key is remembered this long per server. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

/**
 * stored: `store` ran now; replayed: the key was used with this body before, nothing ran again;
 * conflict: the key was used with another body; in-progress: another origin is storing it (Redis);
 * capped: the server has stored MAX_KEYS_PER_DAY new keys today, nothing ran.
 */
export type Outcome = 'stored' | 'replayed' | 'conflict' | 'in-progress' | 'capped';

/** Runs an ingestion at most once per server and Idempotency-Key within 24 hours. */
export type IdempotencyStore = {
  /** New keys a server may store per UTC day. */
  maxKeysPerDay: number;
  /** `body`: the request's JSON, as the client means it (a repeat must match it); `now`: the clock, for the 24 hours. */
  once(serverId: string, key: string, body: string, store: () => Promise<void>, now: number): Promise<Outcome>;
};

/** What is kept of a key and of a body: 128 bits of their SHA-256. */
export const digest = (text: string) => sha256Hex(text).slice(0, 32);
