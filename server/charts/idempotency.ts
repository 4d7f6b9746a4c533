import type { Redis } from 'ioredis';
import { HTTPError, type H3Event } from 'h3';
import { z } from 'zod';
import { STDERR_LINES, type Log } from '../helpers/log.ts';
import type { Storage } from '../storage.ts';
import { fileIdempotencyStore } from './idempotency/file.ts';
import { redisIdempotencyStore } from './idempotency/redis.ts';
import type { IdempotencyStore } from './idempotency/contract.ts';

export type { IdempotencyStore } from './idempotency/contract.ts';

/**
 * New Idempotency-Keys a server may store per UTC day (one keyed request every 8.6 s all day): past
 * it, keyed ingestion answers 429 until midnight UTC, so one key holder cannot fill the store.
 */
export const MAX_KEYS_PER_DAY = 10_000;

/** Idempotency-Key: what a client may send (Stripe's limit of 255, printable ASCII). */
const IdempotencyKey = z
  .string()
  .regex(/^[\x20-\x7e]{1,255}$/, { error: 'Idempotency-Key must be 1 to 255 printable ASCII characters' });

/**
 * Runs an ingestion at most once per server and Idempotency-Key within 24 hours, in the configured
 * backend: Redis (idempotency/redis.ts) or the embedded store (idempotency/file.ts), behind the
 * same contract (test/store-contract.ts). One small record per key either way. The samples are
 * written first and the key after, so a crash between the two can at worst count a retry twice;
 * it never loses an answered sample. `maxKeysPerDay`: tests lower the cap.
 */
export function idempotencyStore(
  storage: Storage,
  redis?: Redis,
  { maxKeysPerDay = MAX_KEYS_PER_DAY, log = STDERR_LINES }: { maxKeysPerDay?: number; log?: Log } = {},
): IdempotencyStore {
  return redis ? redisIdempotencyStore(redis, maxKeysPerDay) : fileIdempotencyStore(storage, { maxKeysPerDay, log });
}

/** A request's Idempotency-Key, null without one; 400 for one that is not 1 to 255 printable ASCII characters. */
export function idempotencyKeyOf(event: H3Event): string | null {
  const header = event.req.headers.get('idempotency-key');
  if (header === null) return null;
  const key = IdempotencyKey.safeParse(header);
  if (!key.success) throw new HTTPError({ status: 400, message: key.error.issues[0]!.message });
  return key.data;
}
