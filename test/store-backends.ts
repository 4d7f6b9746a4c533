// The two backends every store is written for, as the store contract suite opens them: the
// embedded store's files (through server/storage.ts) on a real tmpfs that can be filled, and a
// real redis-server on a loopback port that can be stopped. Each breaks the way it breaks in
// production (a full disk, Redis down) and mends again.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { redisReady } from '../server/redis.ts';
import { StorageUnavailableError, createFileStorage, createRedisStorage, type StateStore } from '../server/storage.ts';
import { findProgram, startRedis } from './processes.ts';
import { fillDisk, mountSmallDisk } from './small-disk.ts';
import { NO_LOG } from '../server/helpers/log.ts';

export type StoreBackend = {
  name: 'files' | 'redis';
  /** An empty store; `another()` opens the same store again, as another process (the CLI, a second origin) would. */
  fresh(): Promise<{ state: StateStore; another(): Promise<StateStore> }>;
  /** Until mend(), writes fail: the disk is full, or Redis is stopped. */
  break(): Promise<void>;
  mend(): Promise<void>;
  /** What a write fails with while broken: ENOSPC from the disk; Redis down is StorageUnavailableError. */
  isBrokenError(error: unknown): boolean;
  close(): Promise<void>;
};

export const BACKENDS = ['files', 'redis'] as const;

export function openBackend(name: StoreBackend['name']): Promise<StoreBackend> {
  return name === 'files' ? filesBackend() : redisBackend();
}

async function filesBackend(): Promise<StoreBackend> {
  const disk = await mountSmallDisk(1024);
  const isNoSpace = (error: unknown): boolean =>
    error instanceof Error &&
    ((error as NodeJS.ErrnoException).code === 'ENOSPC' ||
      /ENOSPC|no space/i.test(error.message) ||
      isNoSpace(error.cause));
  return {
    name: 'files',
    async fresh() {
      const dir = await mkdtemp(join(disk.dir, 'store-'));
      return {
        state: { storage: createFileStorage(dir) },
        another: async () => ({ storage: createFileStorage(dir) }),
      };
    },
    break: async () => void (await fillDisk(disk.dir)),
    mend: () => rm(join(disk.dir, 'filler'), { force: true }),
    isBrokenError: isNoSpace,
    close: () => disk.unmount(),
  };
}

async function redisBackend(): Promise<StoreBackend> {
  const program = findProgram('redis-server');
  if (!program) throw new Error('redis-server is not installed (apt-get install -y redis-server; .ci/run does)');
  // Kept in an append-only file, as a deployment keeps it: what was stored survives the outage.
  const keepIn = await mkdtemp(join(tmpdir(), 'depot-store-redis-'));
  const server = await startRedis(program, { keepIn });
  const clients: Redis[] = [];
  const open = async (): Promise<StateStore> => {
    const state = createRedisStorage(server.url, NO_LOG);
    clients.push(state.redis!);
    if (!(await redisReady(state.redis!, 5000))) throw new Error('Redis did not become ready within 5 s');
    return state;
  };
  /** Every client has seen the change (bounded: 5 s). */
  const settled = async (ready: boolean) => {
    for (let i = 0; i < 100 && clients.some((client) => (client.status === 'ready') !== ready); i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
  };
  return {
    name: 'redis',
    async fresh() {
      const state = await open();
      await state.redis!.flushall();
      return { state, another: open };
    },
    async break() {
      await server.stop();
      await settled(false);
    },
    async mend() {
      await server.start();
      await settled(true);
    },
    isBrokenError: (error) => error instanceof StorageUnavailableError,
    async close() {
      for (const client of clients) client.disconnect();
      await server.stop();
      await rm(keepIn, { recursive: true, force: true });
    },
  };
}
