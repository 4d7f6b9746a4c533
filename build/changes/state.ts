import type { Config } from '../../server/config.ts';
import { STDERR_LINES } from '../../server/helpers/log.ts';
import { redactUrl, redisReady } from '../../server/redis.ts';
import { openStateStore, type StateStore } from '../../server/storage.ts';
import { RefusedError } from './refused.ts';

/**
 * The state the origins share (STORAGE_DIR, or Redis with REDIS_URL), for one CLI command: Redis
 * must answer within 5 s, and the store is closed once `use` is done.
 */
export async function withState<T>(
  config: Pick<Config, 'storageDir' | 'redisUrl'>,
  use: (state: StateStore) => Promise<T>,
): Promise<T> {
  const state = openStateStore(config, STDERR_LINES);
  try {
    if (state.redis && !(await redisReady(state.redis, 5000)))
      throw new RefusedError(`Redis at ${redactUrl(config.redisUrl!)} is not reachable`);
    return await use(state);
  } finally {
    await state.redis?.quit().catch(() => {});
    await state.storage.dispose();
  }
}
