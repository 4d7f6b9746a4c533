import type { Redis } from 'ioredis';
import { redisKey, unavailable, unavailableUnlessScriptFailed } from '../storage.ts';
import type { PublishTokenStore } from './contract.ts';
import { LAST_USED_EVERY_MS, PublishTokenRecord, publishTokenKey } from './schema.ts';

/** Keys per SCAN step, and the most steps a listing takes (tokens number in the tens, not millions). */
const SCAN_COUNT = 500;
const MAX_SCAN_STEPS = 10_000;

/**
 * Sets lastUsedAt (ARGV[1]) on a record that still exists and was not used since ARGV[2]: in one
 * script, so a DEL by `depot token revoke` can never be undone by a request that read the record
 * before it. ISO times of one format compare as strings.
 */
const MARK_USED = `
local stored = redis.call('get', KEYS[1])
if not stored then return 0 end
local record = cjson.decode(stored)
if type(record.lastUsedAt) == 'string' and record.lastUsedAt > ARGV[2] then return 0 end
record.lastUsedAt = ARGV[1]
redis.call('set', KEYS[1], cjson.encode(record))
return 1`;

const parsed = (value: string | null) => {
  if (value === null) return null;
  try {
    return PublishTokenRecord.safeParse(JSON.parse(value)).data ?? null;
  } catch {
    return null;
  }
};

/**
 * Redis's tokens: `depot:publish-tokens:<digest>`, the record's JSON (the key and value the
 * storage driver would write, so `depot migrate` can copy files' records as they are). Every
 * origin reads Redis on each request: a DEL is seen by the next one.
 */
export function redisPublishTokens(redis: Redis): PublishTokenStore {
  const keyOf = (tokenHash: string) => redisKey(publishTokenKey(tokenHash));
  const list = async () => {
    const keys: string[] = [];
    let cursor = '0';
    for (let step = 0; step < MAX_SCAN_STEPS; step++) {
      const [next, found] = await redis
        .scan(cursor, 'MATCH', redisKey(publishTokenKey('*')), 'COUNT', SCAN_COUNT)
        .catch(unavailable);
      keys.push(...found);
      cursor = next;
      if (cursor === '0') break;
    }
    const unique = [...new Set(keys)];
    const values = unique.length === 0 ? [] : await redis.mget(unique).catch(unavailable);
    return values
      .map(parsed)
      .filter((r) => r !== null)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  };
  return {
    async add(record) {
      await redis.set(keyOf(record.tokenHash), JSON.stringify(PublishTokenRecord.parse(record))).catch(unavailable);
    },
    find: async (tokenHash) => parsed(await redis.get(keyOf(tokenHash)).catch(unavailable)),
    list,
    async revoke(id) {
      const record = (await list()).find((r) => r.id === id);
      if (!record) return null;
      // Two revokes at once: the one whose DEL removed the key reports it.
      return (await redis.del(keyOf(record.tokenHash)).catch(unavailable)) === 1 ? record : null;
    },
    async markUsed(tokenHash, now) {
      const at = new Date(now).toISOString();
      const since = new Date(now - LAST_USED_EVERY_MS).toISOString();
      await redis.eval(MARK_USED, 1, keyOf(tokenHash), at, since).catch(unavailableUnlessScriptFailed);
    },
  };
}
