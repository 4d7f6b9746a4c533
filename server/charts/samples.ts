import type { Redis } from 'ioredis';
import { STDERR_LINES, type Log } from '../helpers/log.ts';
import type { Storage } from '../storage.ts';
import { fileSampleStore } from './samples/file.ts';
import { redisSampleStore } from './samples/redis.ts';
import type { SampleStore } from './samples/contract.ts';

export { DayRecord, RETENTION_DAYS, dayExpiresAt, type Sample, type SampleStore } from './samples/contract.ts';

/**
 * Player counts folded into hourly buckets, one storage item per server and UTC day, in the
 * configured backend: Redis (every origin's state; samples/redis.ts) or the embedded store
 * (samples/file.ts), behind the same contract (test/store-contract.ts).
 */
export function sampleStore(storage: Storage, redis?: Redis, log: Log = STDERR_LINES): SampleStore {
  return redis ? redisSampleStore(storage, redis, log) : fileSampleStore(storage, log);
}
