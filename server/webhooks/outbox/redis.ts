import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { StorageUnavailableError, redisKey, unavailable } from '../../storage.ts';
import type { ClaimDelivery, DueEntry, DueIndex, OutboxBackend } from './contract.ts';

/**
 * Redis's outbox: its due index in sorted sets, and a delivery's lease is a key set NX that
 * expires after `ms` (an origin killed mid-attempt lets another retry then).
 */
export function redisOutbox(redis: Redis): OutboxBackend {
  return { index: redisDueIndex(redis), claim: redisLease(redis) };
}

function redisLease(redis: Redis): ClaimDelivery {
  return async (delivery, ms) => {
    const key = redisKey(`webhook-lease:${delivery.id}`);
    const token = randomBytes(8).toString('hex');
    if ((await redis.set(key, token, 'PX', ms, 'NX').catch(unavailable)) !== 'OK') return null;
    return async () => {
      await redis.eval(RELEASE_IF_HELD, 1, key, token).catch(() => {});
    };
  };
}

/** Deletes a lease only if it is still ours (it may have expired and been taken by another origin). */
const RELEASE_IF_HELD = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * Redis: one sorted set per webhook, `depot:webhook-due:<webhook>`, delivery ids scored by their
 * time (a move is one ZADD), and the set of webhooks that have one, `depot:webhook-due-webhooks`,
 * so a poll costs a command per webhook and never a scan of the keyspace.
 */
function redisDueIndex(redis: Redis): DueIndex {
  const setOf = (webhookId: string) => redisKey(`webhook-due:${webhookId}`);
  const WEBHOOKS = redisKey('webhook-due-webhooks');
  const replies = async (pipeline: ReturnType<Redis['pipeline']>) => {
    const answers = (await pipeline.exec().catch(unavailable)) ?? [];
    return answers.map(([error, reply]) => {
      if (error) throw new StorageUnavailableError(error);
      return reply as string[];
    });
  };
  const add = async (entry: DueEntry, due = entry.due) => {
    await redis
      .multi()
      .zadd(setOf(entry.webhookId), due, entry.id)
      .sadd(WEBHOOKS, entry.webhookId)
      .exec()
      .catch(unavailable);
  };
  return {
    add: (entry) => add(entry),
    move: (entry, due) => add(entry, due),
    async remove(entry) {
      await redis.zrem(setOf(entry.webhookId), entry.id).catch(unavailable);
    },
    async due(now, limit) {
      const webhookIds = await redis.smembers(WEBHOOKS).catch(unavailable);
      const pipeline = redis.pipeline();
      for (const id of webhookIds) pipeline.zrangebyscore(setOf(id), '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit);
      const byWebhook = new Map<string, DueEntry[]>();
      for (const [index, flat] of (await replies(pipeline)).entries()) {
        const webhookId = webhookIds[index]!;
        const list: DueEntry[] = [];
        for (let i = 0; i + 1 < flat.length; i += 2) list.push({ webhookId, id: flat[i]!, due: Number(flat[i + 1]) });
        if (list.length > 0) byWebhook.set(webhookId, list);
      }
      return byWebhook;
    },
    async indexedIds(webhookIds) {
      const pipeline = redis.pipeline();
      for (const id of webhookIds) pipeline.zrange(setOf(id), 0, -1);
      return new Set((await replies(pipeline)).flat());
    },
    async forget(webhookId) {
      await redis.multi().del(setOf(webhookId)).srem(WEBHOOKS, webhookId).exec().catch(unavailable);
    },
  };
}
