import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { runBuild } from '../build/build.ts';
import { DAY, HOUR } from '../server/helpers/duration.ts';
import { RETENTION_DAYS, dayKey, readRange, type DayRecord } from '../server/charts/samples/contract.ts';
import { serverStore } from '../server/charts/servers.ts';
import { hashSecret, newSecret } from '../server/http/auth.ts';
import { createFileStorage, createRedisStorage, type Storage } from '../server/storage.ts';
import { redisReady } from '../server/redis.ts';
import { findProgram, startProcess, startRedis } from '../test/processes.ts';
import { cpuMicros, median, report } from './harness.ts';

/** The game servers posting at once, one connection each (issue 32: 50 clients, one sample per POST). */
const CLIENTS = 50;
/** Single-sample POSTs per round: about two seconds at the target pace. */
const POSTS_PER_ROUND = 5000;
/** Batch POSTs per round, 1,000 samples each. */
const BATCHES_PER_ROUND = 100;
const BATCH_SIZE = 1000;
/** The grown store: this many servers, each with a stored day for every day of retention. */
const GROWN_SERVERS = 1000;
const PORTS = { embedded: 4125, grown: 4126, origins: [4127, 4128], redis: 4129 };

type Poster = { id: string; key: string };
/** Samples/s, and the origins' CPU time (µs) per sample, medians over the rounds. */
type Figures = { single: number; batch: number; singleCpu: number; batchCpu: number };
type Workspace = { dataDir: string; distDir: string; dir: string };

/**
 * Ingestion (issue 32): samples/s from 50 clients, each a server posting one sample per POST,
 * every answer a 204 that is on disk (or, with Redis, in its fsynced append-only file); on the
 * embedded store as `npm start` runs it, on a store that already holds a year of 1,000 servers,
 * and through two origins sharing one Redis; each beside batches of 1,000 samples per POST from
 * the same clients on the same store. After each figure, every answered sample is counted back
 * from the store.
 */
export async function benchIngestion(ws: Workspace, rounds: number) {
  console.log(`\n# Ingestion (${CLIENTS} clients, one server each; ${rounds} rounds)`);
  if (!existsSync(join(ws.distDir, 'current'))) await runBuild({ dataDir: ws.dataDir, distDir: ws.distDir });
  const env = {
    HOST: '127.0.0.1',
    RATE_LIMIT: '0',
    INGEST_RATE_LIMIT: '0', // the clients post as fast as they are answered
    LOG_REQUESTS: 'off',
    DIST_DIR: ws.distDir,
    DATA_DIR: ws.dataDir,
  };

  const embeddedDir = join(ws.dir, 'ingest-embedded');
  const embedded = await measureOrigins(createFileStorage(embeddedDir), [PORTS.embedded], rounds, {
    ...env,
    STORAGE_DIR: embeddedDir,
  });
  reportFigures('embedded store', embedded);

  const grownDir = join(ws.dir, 'ingest-grown');
  const grownStorage = createFileStorage(grownDir);
  const grown = await measureOrigins(grownStorage, [PORTS.grown], rounds, { ...env, STORAGE_DIR: grownDir }, () =>
    growStore(grownDir, grownStorage),
  );
  report(
    `  store of ${GROWN_SERVERS} servers x ${RETENTION_DAYS} days`,
    grown.single,
    'smp/s',
    'empty store, same run',
    embedded.single,
    '>= 0.9',
  );
  report(
    `  CPU, ${GROWN_SERVERS} x ${RETENTION_DAYS} days`,
    grown.singleCpu,
    'µs/smp',
    'empty store, same run',
    embedded.singleCpu,
  );

  const redisBin = findProgram('redis-server');
  if (!redisBin) {
    console.log('redis-server not found: apt-get install -y redis-server for the two-origin figure');
    return;
  }
  const redisDir = join(ws.dir, 'ingest-redis');
  await mkdir(redisDir, { recursive: true });
  // Every write fsynced before Redis answers, as an answered sample must survive a crash.
  const redis = await startRedis(redisBin, { port: PORTS.redis, keepIn: redisDir });
  const state = createRedisStorage(redis.url);
  try {
    // Its client fails commands until connected, rather than queueing them.
    if (!(await redisReady(state.redis!, 5000))) throw new Error(`Redis at ${redis.url} did not answer within 5 s`);
    const shared = await measureOrigins(state.storage, PORTS.origins, rounds, {
      ...env,
      STORAGE_DIR: join(ws.dir, 'ingest-redis-storage'),
      REDIS_URL: redis.url,
    });
    reportFigures('2 origins, 1 Redis', shared);
  } finally {
    state.redis?.disconnect();
    await redis.stop();
  }
}

/** One sample per POST beside batches of 1,000: samples/s, then the origins' CPU time per sample. */
function reportFigures(store: string, figures: Figures) {
  report(
    `1 sample/POST, 50 clients, ${store}`,
    figures.single,
    'smp/s',
    'batches of 1,000/POST',
    figures.batch,
    '> 2000',
  );
  report(`  CPU per sample, ${store}`, figures.singleCpu, 'µs/smp', 'batches of 1,000/POST', figures.batchCpu);
}

/**
 * Starts the origins on `ports` (the posters split between them), and measures single-sample and
 * batch samples/s, medians of `rounds`; `prepare` runs before the origins start.
 */
async function measureOrigins(
  storage: Storage,
  ports: number[],
  rounds: number,
  env: Record<string, string>,
  prepare?: () => Promise<Poster[]>,
): Promise<Figures> {
  const posters = prepare ? await prepare() : await addServers(storage, CLIENTS);
  const origins: Awaited<ReturnType<typeof startProcess>>[] = [];
  const posting = posters.slice(0, CLIENTS);
  let before = 0;
  let answered = 0;
  try {
    for (const port of ports)
      origins.push(
        await startProcess(
          process.execPath,
          ['--import', 'tsx', 'server/main.ts'],
          `http://127.0.0.1:${port}/api/image/brand`,
          {
            ...env,
            PORT: String(port),
          },
        ),
      );
    before = await storedCount(storage, posting);
    // The origins' CPU time (user + system, all threads) per sample: unlike samples/s, it does not
    // depend on what else the machine's cores are doing meanwhile.
    const cpu = () => origins.reduce((sum, origin) => sum + cpuMicros(origin.child.pid!), 0);
    const measured = async (total: number, body: (i: number) => string, size: number) => {
      const used = cpu();
      const perSecond = (await post(ports, posting, total, body)) * size;
      answered += total * size;
      return { perSecond, cpuPerSample: (cpu() - used) / (total * size) };
    };
    await measured(POSTS_PER_ROUND, singleBody, 1); // warm-up: JIT, the start-up sweep
    const figures = {
      single: [] as number[],
      batch: [] as number[],
      singleCpu: [] as number[],
      batchCpu: [] as number[],
    };
    for (let round = 0; round < rounds; round++) {
      const single = await measured(POSTS_PER_ROUND, singleBody, 1);
      const batch = await measured(BATCHES_PER_ROUND, batchBody, BATCH_SIZE);
      figures.single.push(single.perSecond);
      figures.singleCpu.push(single.cpuPerSample);
      figures.batch.push(batch.perSecond);
      figures.batchCpu.push(batch.cpuPerSample);
    }
    return {
      single: median(figures.single),
      batch: median(figures.batch),
      singleCpu: median(figures.singleCpu),
      batchCpu: median(figures.batchCpu),
    };
  } finally {
    for (const origin of origins) await origin.stop();
    // Counted once the origins have stopped: the embedded store folds its journal into the days by then.
    const stored = (await storedCount(storage, posting)) - before;
    if (stored !== answered) throw new Error(`${answered} samples answered 204, ${stored} stored`);
  }
}

const singleBody = (i: number) => `{"players":${i % 100}}`;

/** 1,000 samples a minute apart, ending now: the day's and yesterday's buckets. */
const batchBody = () =>
  JSON.stringify({
    samples: Array.from({ length: BATCH_SIZE }, (_, i) => ({
      at: new Date(Date.now() - i * 60_000).toISOString(),
      players: i % 100,
    })),
  });

/**
 * `total` POSTs from one connection per poster (its own server and key), spread over `ports`;
 * refuses any answer but 204. POSTs per second.
 */
async function post(ports: number[], posters: Poster[], total: number, body: (i: number) => string): Promise<number> {
  const bodies = Array.from({ length: 16 }, (_, i) => body(i));
  let connection = 0;
  const result = await autocannon({
    // autocannon spreads the connections over the URLs, so the posters split between the origins
    // (its types name one URL; it takes a list).
    url: ports.map((port) => `http://127.0.0.1:${port}`) as unknown as string,
    connections: posters.length,
    amount: total,
    pipelining: 1,
    method: 'POST',
    setupClient: (client) => {
      const poster = posters[connection++ % posters.length]!;
      client.setRequests(
        bodies.map((b) => ({
          method: 'POST',
          path: `/api/servers/${poster.id}/stats`,
          headers: { authorization: `Bearer ${poster.key}`, 'content-type': 'application/json' },
          body: b,
        })),
      );
    },
  });
  if (result.non2xx > 0 || result.errors > 0 || result['2xx'] !== total)
    throw new Error(
      `ingestion: ${result['2xx']} of ${total} answered 2xx (${result.non2xx} not, ${result.errors} errors)`,
    );
  return total / result.duration;
}

/** `count` servers, each with its ingestion key, in `storage` (the origins' store). */
async function addServers(storage: Storage, count: number): Promise<Poster[]> {
  const servers = serverStore(storage);
  const posters: Poster[] = [];
  for (let i = 0; i < count; i++) {
    const poster = { id: randomUUID(), key: newSecret('dpk') };
    await servers.add({
      id: poster.id,
      owner: 'bench',
      private: false,
      ingestKeyHash: hashSecret(poster.key),
      createdAt: new Date().toISOString(),
    });
    posters.push(poster);
  }
  return posters;
}

/**
 * The embedded store as a year of GROWN_SERVERS servers leaves it: a stored day (24 full hours)
 * for every server and day of retention, today's included. The day files are hard links to one
 * file per day (no store write could tell), so a year of 1,000 servers takes seconds to lay out.
 */
async function growStore(dir: string, storage: Storage): Promise<Poster[]> {
  const posters = await addServers(storage, GROWN_SERVERS);
  const today = Math.floor(Date.now() / DAY);
  const full: DayRecord = Object.fromEntries(Array.from({ length: 24 }, (_, hour) => [String(hour), [90, 1200, 60]]));
  const templates = join(dir, 'bench-days');
  await mkdir(templates, { recursive: true });
  for (let day = today - RETENTION_DAYS + 1; day <= today; day++)
    await writeFile(join(templates, String(day)), JSON.stringify(full));
  const pathOf = (key: string) => join(dir, ...key.split(':'));
  for (const { id } of posters) {
    await mkdir(join(dir, 'samples', id), { recursive: true, mode: 0o700 });
    const links = [];
    for (let day = today - RETENTION_DAYS + 1; day <= today; day++)
      links.push(link(join(templates, String(day)), pathOf(dayKey(id, day))));
    await Promise.all(links);
  }
  return posters;
}

/** Samples stored for `posters` over the last two days (every bench sample falls in them), by the buckets' counts. */
async function storedCount(storage: Storage, posters: Poster[]): Promise<number> {
  const now = Date.now();
  let total = 0;
  for (const { id } of posters)
    for (const bucket of await readRange(storage, id, now - 2 * DAY, now + HOUR)) total += bucket.count;
  return total;
}
