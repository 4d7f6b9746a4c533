import type { Redis } from 'ioredis';
import { redisKey, unavailable } from '../../storage.ts';

/** Redis: SET NX, then whatever is there (the first origin's key). */
export function redisUrlKey(redis: Redis, key: string) {
  return {
    keepFirst: (fresh: string): Promise<unknown> =>
      redis
        .set(redisKey(key), fresh, 'NX')
        .then(() => redis.get(redisKey(key)))
        .catch(unavailable),
  };
}
