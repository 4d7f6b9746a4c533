import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import { DayRecord, dayExpiresAt } from '../../server/charts/samples.ts';
import { ServerRecord } from '../../server/charts/servers.ts';
import type { Config } from '../../server/config.ts';
import { copyAuditLog } from '../../server/audit/store.ts';
import { AUDIT_KEY } from '../../server/audit/store/file.ts';
import { redactUrl } from '../../server/redis.ts';
import { CACHE_PREFIX, createFileStorage, redisKey, type Storage } from '../../server/storage.ts';
import { TokenRecord } from '../../server/users.ts';
import { PublishTokenRecord } from '../../server/publish-tokens/schema.ts';
import { Delivery, WebhookRecord } from '../../server/webhooks/schema.ts';
import { RefusedError } from '../changes/refused.ts';
import { withState } from '../changes/state.ts';

/** What the embedded store holds that Redis must get; caches (charts, brand images) fill again by themselves. */
const KINDS: {
  prefix: string;
  name: 'servers' | 'tokens' | 'publishingTokens' | 'samples' | 'webhooks' | 'deliveries';
  schema: z.ZodType;
  expiresAt?: (key: string) => number;
}[] = [
  { prefix: 'servers:', name: 'servers', schema: ServerRecord },
  { prefix: 'user-tokens:', name: 'tokens', schema: TokenRecord },
  { prefix: 'publish-tokens:', name: 'publishingTokens', schema: PublishTokenRecord },
  {
    prefix: 'samples:',
    name: 'samples',
    schema: DayRecord,
    expiresAt: (key) => dayExpiresAt(Number(key.split(':').at(-1))),
  },
  { prefix: 'webhooks:', name: 'webhooks', schema: WebhookRecord },
  // Pending deliveries and the finished ones a webhook's list shows.
  { prefix: 'webhook-outbox:', name: 'deliveries', schema: Delivery },
  { prefix: 'webhook-log:', name: 'deliveries', schema: Delivery },
];
/** Caches are not copied (they fill again); `charts:` and `brand-images:` are where they lived before `cache:`. */
const CACHES = [`${CACHE_PREFIX}:`, 'charts:', 'brand-images:'];

/**
 * `migrate [--to redis://...]`: copies servers, users' tokens, player-count days and webhooks (with their deliveries) from the
 * embedded store (STORAGE_DIR) into Redis (--to, or REDIS_URL). Each record is checked as the
 * origin reads it; a key Redis already holds is never overwritten (the same value counts as done,
 * another is listed as a conflict), so running it again is safe.
 */
export async function migrateToRedis(args: string[], config: Config) {
  const { values } = parseArgs({ args, options: { to: { type: 'string' } } });
  const url = values.to ?? config.redisUrl;
  if (!url || !/^rediss?:\/\//.test(url))
    throw new RefusedError('--to: missing; give the Redis URL, e.g. --to redis://127.0.0.1:6379 (or set REDIS_URL)');
  const source = createFileStorage(config.storageDir);
  try {
    return await withState({ storageDir: config.storageDir, redisUrl: url }, ({ redis }) =>
      copyToRedis(source, redis!, { from: config.storageDir, to: redactUrl(url) }),
    );
  } finally {
    await source.dispose();
  }
}

/** Each kind's records, checked, into keys Redis does not hold yet; a report of what happened. */
async function copyToRedis(source: Storage, redis: Redis, names: { from: string; to: string }) {
  const keys = await source.getKeys();
  const copied = { servers: 0, tokens: 0, publishingTokens: 0, samples: 0, webhooks: 0, deliveries: 0 };
  const result = {
    ...names,
    copied,
    unchanged: 0,
    expired: 0,
    cachesLeft: 0,
    idempotencyLeft: 0,
    conflicts: [] as string[],
    invalid: [] as string[],
  };
  const now = Date.now() / 1000;
  for (const [index, key] of keys.entries()) {
    if (index > 0 && index % 1000 === 0) console.error(`[migrate] ${index}/${keys.length} keys`);
    const kind = KINDS.find((k) => key.startsWith(k.prefix));
    if (!kind) {
      if (CACHES.some((prefix) => key.startsWith(prefix))) result.cachesLeft++;
      // Ingestion's Idempotency-Keys (24 hours): Redis keeps them in another shape; the origins start afresh.
      else if (key.startsWith('idempotency:')) result.idempotencyLeft++;
      // The webhook outbox's due index: the origins file the copied outbox entries in Redis's own.
      else if (key.startsWith('webhook-due:')) continue;
      // The audit log, copied whole below.
      else if (key === AUDIT_KEY) continue;
      else result.invalid.push(key);
      continue;
    }
    const record = kind.schema.safeParse(await source.getItem(key));
    if (!record.success) {
      result.invalid.push(key);
      continue;
    }
    const expiresAt = kind.expiresAt?.(key);
    if (expiresAt !== undefined && expiresAt <= now) {
      result.expired++;
      continue;
    }
    // The same JSON the storage driver writes, set only where Redis has nothing yet (NX).
    const value = JSON.stringify(record.data);
    const target = redisKey(key);
    const written =
      expiresAt === undefined
        ? await redis.set(target, value, 'NX')
        : await redis.set(target, value, 'EXAT', expiresAt, 'NX');
    if (written === 'OK') copied[kind.name]++;
    else if ((await redis.get(target)) === value) result.unchanged++;
    else result.conflicts.push(key);
  }
  return { ...result, audit: await copyAuditLog(source, redis) };
}
