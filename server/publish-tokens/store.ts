import type { Redis } from 'ioredis';
import type { Storage } from '../storage.ts';
import type { PublishTokenStore } from './store/contract.ts';
import { filePublishTokens } from './store/file.ts';
import { redisPublishTokens } from './store/redis.ts';

export type { PublishTokenStore };

/**
 * Publishing tokens in the configured backend: Redis with REDIS_URL (store/redis.ts), else the
 * embedded store (store/file.ts; memory in tests); one contract (test/publish-tokens.test.ts).
 */
export function publishTokenStore(storage: Storage, redis?: Redis): PublishTokenStore {
  return redis ? redisPublishTokens(redis, storage) : filePublishTokens(storage);
}
