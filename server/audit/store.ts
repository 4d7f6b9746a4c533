import type { Redis } from 'ioredis';
import type { Storage } from '../storage.ts';
import type { AuditStore } from './store/contract.ts';
import { auditLine } from './lines.ts';
import { fileAuditLog } from './store/file.ts';
import { redisAuditLog } from './store/redis.ts';

/**
 * Records kept in Redis's stream; older ones are trimmed as new ones come (an exact MAXLEN: a
 * change is rare, so the exact trim costs nothing that matters). At a few hundred bytes a record,
 * about 30 MB; a hundred changes a day for nearly three years. The embedded store keeps all.
 */
const AUDIT_MAX_RECORDS = 100_000;

/**
 * The audit log of the configured backend: a stream in Redis (REDIS_URL, store/redis.ts), else an
 * append-only JSON-lines file in the embedded store (store/file.ts); one contract
 * (test/store-contract.test.ts).
 */
export function auditStore(storage: Storage, redis?: Redis, options: { maxRecords?: number } = {}): AuditStore {
  return redis ? redisAuditLog(redis, options.maxRecords ?? AUDIT_MAX_RECORDS) : fileAuditLog(storage);
}

/**
 * `depot migrate`: the embedded store's log into Redis's stream, in order, when the stream is
 * empty. A stream with records of its own keeps them first: the file's records it lacks are left
 * (counted), never appended after newer ones; those it holds already (a second run) are unchanged.
 */
export async function copyAuditLog(storage: Storage, redis: Redis) {
  const { records } = await fileAuditLog(storage).read();
  const stream = redisAuditLog(redis, AUDIT_MAX_RECORDS);
  const held = new Set((await stream.read()).records.map(auditLine));
  if (held.size === 0) {
    for (const record of records) await stream.append(record);
    return { copied: records.length, unchanged: 0, left: 0 };
  }
  const unchanged = records.filter((record) => held.has(auditLine(record))).length;
  return { copied: 0, unchanged, left: records.length - unchanged };
}
