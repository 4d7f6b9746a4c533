import type { Redis } from 'ioredis';
import { redisKey, unavailable, unavailableUnlessScriptFailed, type Storage } from '../../storage.ts';
import { listTokenRecords } from './file.ts';
import type { PublishTokenStore } from './contract.ts';
import { LAST_USED_EVERY_MS, PublishTokenRecord, publishTokenKey } from '../schema.ts';

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
 * storage driver would write, so `depot migrate` can copy files' records as they are, and listing
 * goes through the storage layer as the embedded store's does). Every
 * origin reads Redis on each request: a DEL is seen by the next one.
 */
export function redisPublishTokens(redis: Redis, storage: Storage): PublishTokenStore {
  const keyOf = (tokenHash: string) => redisKey(publishTokenKey(tokenHash));
  const list = () => listTokenRecords(storage);
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
