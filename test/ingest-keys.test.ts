import { readdir, writeFile, mkdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createApi } from '../server/app.ts';
import { idempotencyStore, MAX_KEYS_PER_DAY } from '../server/charts/idempotency.ts';
import { readConfig } from '../server/config.ts';
import { createAppContext } from '../server/context.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { createFileStorage, createMemoryStorage, createRedisStorage, type Storage } from '../server/storage.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { redisReady } from '../server/redis.ts';
import {
  findProgram,
  makeAccounts,
  makeWorkspace,
  startRedis,
  startTestOrigin,
  type Accounts,
  type Workspace,
} from './helpers.ts';
import { NO_LOG } from '../server/helpers/log.ts';

// Issue 27, item 2: one ingestion key cannot stall the origin, fill its store or cost the others.

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-20T12:30:00Z');

const ctx = {} as { workspace: Workspace; accounts: Accounts };
let prepared: Promise<void> | undefined;
/** One workspace and its accounts for every suite: a build and four CLI runs are the slow part. */
const prepare = () =>
  (prepared ??= (async () => {
    ctx.workspace = await makeWorkspace();
    ctx.accounts = await makeAccounts(ctx.workspace);
  })());

/**
 * The real store, with the bytes of every record read and written counted on the way: what a
 * request costs, whatever the driver. (Records only; listing keys is counted as calls.)
 */
function recording(storage: Storage) {
  const traffic = { bytes: 0, listings: 0 };
  const size = (value: unknown) => (value === null || value === undefined ? 0 : JSON.stringify(value).length);
  const recorded = new Proxy(storage, {
    get(target, name, receiver) {
      const original = Reflect.get(target, name, receiver) as unknown;
      if (typeof original !== 'function') return original;
      const call = (original as (...args: unknown[]) => unknown).bind(target);
      if (name === 'getItem' || name === 'getItemRaw')
        return async (...args: unknown[]) => {
          const value = await call(...args);
          traffic.bytes += size(value instanceof Uint8Array ? Buffer.from(value).toString() : value);
          return value;
        };
      if (name === 'setItem' || name === 'setItemRaw')
        return async (key: string, value: unknown, ...rest: unknown[]) => {
          traffic.bytes += size(value instanceof Uint8Array ? Buffer.from(value).toString() : value);
          return call(key, value, ...rest);
        };
      if (name === 'getKeys')
        return async (...args: unknown[]) => {
          traffic.listings++;
          return call(...args);
        };
      return call;
    },
  });
  return { storage: recorded, traffic };
}

const SERVER = '5b1d7a40-0000-4000-8000-000000000001';
const nothing = async () => {};

const records = suite('Idempotency-Keys: one small record per key');

for (const [name, open] of [
  ['memory', async () => createMemoryStorage()],
  ['files', async () => createFileStorage(join((await prepare(), ctx.workspace.dir), 'key-cost'))],
] as const) {
  records(`a keyed request reads and writes the same few bytes after 2,000 keys as after one (${name})`, async () => {
    const { storage, traffic } = recording(await open());
    const keys = idempotencyStore(storage);
    const cost = async (key: string, now: number) => {
      const before = { ...traffic };
      assert.is(await keys.once(SERVER, key, '{"players":1}', nothing, now), 'stored');
      return { bytes: traffic.bytes - before.bytes, listings: traffic.listings - before.listings };
    };
    await cost('first', NOW); // the server's first of the day also looks at its stored days, once
    const early = await cost('second', NOW + 1);
    for (let i = 0; i < 2000; i++) await keys.once(SERVER, `bulk-${i}`, '{"players":1}', nothing, NOW + 2);
    const late = await cost('last', NOW + 3);
    assert.equal(late, early, 'what one more key costs does not grow with the keys stored');
    assert.ok(late.bytes < 512, `${late.bytes} bytes per keyed request`);
    assert.is(late.listings, 0);
  });
}

records(`a server stores at most ${MAX_KEYS_PER_DAY} new keys per UTC day; replays still answer`, async () => {
  const keys = idempotencyStore(createMemoryStorage());
  let stored = 0;
  for (let i = 0; i < MAX_KEYS_PER_DAY; i++)
    if ((await keys.once(SERVER, `k-${i}`, '{}', nothing, NOW)) === 'stored') stored++;
  assert.is(stored, MAX_KEYS_PER_DAY);
  let ran = false;
  const run = async () => void (ran = true);
  assert.is(await keys.once(SERVER, 'one-more', '{}', run, NOW), 'capped');
  assert.not.ok(ran, 'nothing is stored for a refused key');
  assert.is(await keys.once(SERVER, 'k-7', '{}', nothing, NOW), 'replayed');
  assert.is(await keys.once('another-server', 'one-more', '{}', nothing, NOW), 'stored', 'other servers are not held');
  const tomorrow = Math.ceil(NOW / DAY) * DAY;
  assert.is(await keys.once(SERVER, 'one-more', '{}', nothing, tomorrow), 'stored', 'a new UTC day, a new allowance');
});

/** A game server's keys, and a publisher's (the publishing API's scope, `publish:<user>`, a folder deeper). */
const SCOPES = [
  { scope: SERVER, folder: [SERVER] },
  { scope: 'publish:alice', folder: ['publish', 'alice'] },
];

records('the cap is counted from the store after a restart', async () => {
  for (const { scope, folder } of SCOPES) {
    const storage = createFileStorage(join((await prepare(), ctx.workspace.dir), 'cap-restart', ...folder));
    for (let i = 0; i < 3; i++)
      await idempotencyStore(storage, undefined, { maxKeysPerDay: 3 }).once(scope, `k-${i}`, '{}', nothing, NOW);
    const restarted = idempotencyStore(storage, undefined, { maxKeysPerDay: 3 });
    assert.is(await restarted.once(scope, 'k-3', '{}', nothing, NOW + 1), 'capped', scope);
    assert.is(await restarted.once(scope, 'k-0', '{}', nothing, NOW + 1), 'replayed', scope);
  }
});

records(
  "a server's or publisher's keys of days before yesterday are swept at its first keyed request of a day",
  async () => {
    for (const { scope, folder } of SCOPES) {
      await prepare();
      const dir = join(ctx.workspace.dir, 'sweep', ...folder);
      const storage = createFileStorage(dir);
      const keys = idempotencyStore(storage);
      for (const day of [0, 1, 2, 3]) await keys.once(scope, `day-${day}`, '{}', nothing, NOW + day * DAY);
      const left = await readdir(join(dir, 'idempotency', ...folder));
      const today = Math.floor((NOW + 3 * DAY) / DAY);
      assert.equal(left.map((name) => Number(name.split('-')[0])).sort(), [today - 1, today], scope);
    }
  },
);

records('the former single file of keys per server is dropped, and keys work on as records', async () => {
  await prepare();
  const dir = join(ctx.workspace.dir, 'legacy');
  // Today's format before per-key records: digest of the key -> [when, digest of the body].
  await mkdir(join(dir, 'idempotency'), { recursive: true });
  await writeFile(join(dir, 'idempotency', SERVER), JSON.stringify({ ['a'.repeat(32)]: [NOW, 'b'.repeat(32)] }));
  const keys = idempotencyStore(createFileStorage(dir));
  assert.is(await keys.once(SERVER, 'after-upgrade', '{}', nothing, NOW), 'stored');
  assert.is(await keys.once(SERVER, 'after-upgrade', '{}', nothing, NOW + 1), 'replayed');
  const [record] = await readdir(join(dir, 'idempotency', SERVER));
  assert.match(
    record!,
    new RegExp(`^${Math.floor(NOW / DAY)}-[0-9a-f]{32}$`),
    'the name is now the folder of per-key records',
  );
});

records.after(async () => {
  await prepared;
  await ctx.workspace?.remove();
  prepared = undefined;
});
records.run();

const http = suite('POST /api/servers/:id/stats: the key cap and INGEST_RATE_LIMIT over HTTP');
const post = (url: string, id: string, key: string, body: unknown, idempotencyKey?: string) =>
  fetch(`${url}/api/servers/${id}/stats`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    body: JSON.stringify(body),
  });

http("past the day's cap a new key answers 429 naming Idempotency-Key and the cap, until midnight UTC", async () => {
  await prepare();
  const storage = createFileStorage(ctx.workspace.storageDir);
  const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const app = createAppContext(storage, { tree: () => tree, now: () => NOW });
  const api = createApi({ ...app, idempotency: idempotencyStore(storage, undefined, { maxKeysPerDay: 2 }) });
  const { id, ingestKey } = ctx.accounts.publicServer;
  const request = (idempotencyKey: string) =>
    api.request(`/api/servers/${id}/stats`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ingestKey}`, 'idempotency-key': idempotencyKey },
      body: '{"players": 3}',
    });
  assert.is((await request('cap-1')).status, 204);
  assert.is((await request('cap-2')).status, 204);
  const refused = await request('cap-3');
  assert.is(refused.status, 429);
  assert.is(refused.headers.get('retry-after'), String((Math.ceil(NOW / DAY) * DAY - NOW) / 1000));
  const { error } = (await refused.json()) as { error: string };
  assert.match(error, /Idempotency-Key/);
  assert.match(error, /at most 2 new keys per UTC day/);
  assert.is((await request('cap-1')).headers.get('idempotent-replayed'), 'true');
});

http('the limit counts per server key: one holder over it does not hold the others back', async () => {
  await prepare();
  let origin: RunningOrigin | undefined;
  try {
    origin = await startTestOrigin(ctx.workspace, {
      storage: createFileStorage(ctx.workspace.storageDir),
      ingestRateLimit: { limit: 3, windowSeconds: 60 },
    });
    const busy = ctx.accounts.publicServer;
    const quiet = ctx.accounts.privateServer;
    for (let i = 0; i < 5; i++)
      assert.is((await post(origin.url, quiet.id, 'dpk_wrong', { players: 1 })).status, 401, 'a wrong key');
    for (let i = 0; i < 3; i++) {
      const answer = await post(origin.url, busy.id, busy.ingestKey, { players: i });
      assert.is(answer.status, 204);
      assert.is(answer.headers.get('ratelimit-policy'), '"ingest";q=3;w=60');
      assert.is(answer.headers.get('x-ratelimit-remaining'), String(2 - i));
    }
    const over = await post(origin.url, busy.id, busy.ingestKey, { players: 9 }, 'over-the-limit');
    assert.is(over.status, 429);
    assert.ok(Number(over.headers.get('retry-after')) >= 1);
    assert.match(
      ((await over.json()) as { error: string }).error,
      /^Ingestion limit of this server's key of 3 requests per 60 seconds exceeded; retry in \d+ seconds$/,
    );
    // Wrong keys did not spend the quiet server's budget, nor did the busy one.
    for (let i = 0; i < 3; i++)
      assert.is((await post(origin.url, quiet.id, quiet.ingestKey, { players: 1 })).status, 204);
  } finally {
    await origin?.close();
  }
});

http('INGEST_RATE_LIMIT: 60 per minute by default, 0 turns it off, anything else is refused at start', () => {
  assert.equal(readConfig({}).ingestRateLimit, { limit: 60, windowSeconds: 60 });
  assert.equal(readConfig({ INGEST_RATE_LIMIT: '600/1h' }).ingestRateLimit, { limit: 600, windowSeconds: 3600 });
  assert.is(readConfig({ INGEST_RATE_LIMIT: '0' }).ingestRateLimit, null);
  assert.throws(() => readConfig({ INGEST_RATE_LIMIT: 'lots' }), /INGEST_RATE_LIMIT.*must be <count>\/<n><s\|m\|h>/);
});

http('hostile Idempotency-Keys: any header is a 204 or a 400 naming it, and a stored key replays', async () => {
  await prepare();
  const origin = await startTestOrigin(ctx.workspace, { storage: createFileStorage(ctx.workspace.storageDir) });
  try {
    const { id, ingestKey } = ctx.accounts.publicServer;
    const hostile = fc.oneof(
      fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 300 }),
      fc.constantFrom(
        '..',
        '../../etc/passwd',
        '/',
        ':',
        'a:b:..',
        '%2e%2e',
        'CON',
        '*',
        '.lock',
        'x.tmp-1-1',
        ' ',
        '$',
      ),
      fc.string({ unit: fc.constantFrom('.', '/', ':', '\\', '$', '%'), minLength: 1, maxLength: 255 }),
    );
    // fetch refuses header values with control characters but tab before sending (they are sent
    // raw below), and trims spaces and tabs.
    const sent = (key: string) => key.replace(/^[\t ]+|[\t ]+$/g, '');
    const sendable = hostile.filter((key) => !/[\x00-\x08\x0a-\x1f\x7f]/.test(key) && sent(key) !== '');
    await fc.assert(
      fc.asyncProperty(sendable, async (key) => {
        // One body for every key: a key the run sent before replays rather than conflicts.
        const body = { players: 1 };
        const answer = await post(origin.url, id, ingestKey, body, key);
        const valid = /^[\x20-\x7e]{1,255}$/.test(sent(key));
        if (!valid) {
          assert.is(answer.status, 400, JSON.stringify(key));
          assert.match(((await answer.json()) as { error: string }).error, /^Idempotency-Key must be/);
          return;
        }
        assert.is(answer.status, 204, JSON.stringify(key));
        const again = await post(origin.url, id, ingestKey, body, key);
        assert.is(again.headers.get('idempotent-replayed'), 'true', JSON.stringify(key));
      }),
      { numRuns: 60 },
    );
    // Control characters, as a client that does not check would send them: Node's parser answers 400.
    for (const key of ['\x01', 'a\x0bb', '\x7f', 'a\x00b']) {
      const head = `POST /api/servers/${id}/stats HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${ingestKey}\r\nidempotency-key: ${key}\r\ncontent-length: 13\r\nconnection: close\r\n\r\n{"players":1}`;
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(origin.url).port), '127.0.0.1', () => socket.end(head));
        let text = '';
        socket.on('data', (chunk) => (text += chunk));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
        socket.setTimeout(10_000, () => socket.destroy(new Error('no answer in 10 s')));
      });
      assert.match(answer, /^HTTP\/1\.1 400 /, JSON.stringify(key));
    }
    // Every key is kept under its digest, inside the store's folder for the server.
    for (const entry of await readdir(join(ctx.workspace.storageDir, 'idempotency', id), { recursive: true }))
      assert.match(entry, /^\d+-[0-9a-f]{32}$/);
  } finally {
    await origin.close();
  }
});

http.after(async () => {
  await prepared;
  await ctx.workspace?.remove();
  prepared = undefined;
});
http.run();

const REDIS = findProgram('redis-server');
if (!REDIS) console.warn('ingest-keys.test.ts: redis-server not installed, the Redis case is not run');
const shared = suite('Idempotency-Keys in Redis');
if (REDIS)
  shared('the cap and the answers are the same, shared by every origin', async () => {
    const redis = await startRedis(REDIS);
    const state = createRedisStorage(redis.url, NO_LOG);
    try {
      assert.ok(await redisReady(state.redis!, 5000));
      const keys = idempotencyStore(state.storage, state.redis, { maxKeysPerDay: 2 });
      assert.is(await keys.once(SERVER, 'r-1', '{}', nothing, NOW), 'stored');
      assert.is(await keys.once(SERVER, 'r-2', '{}', nothing, NOW), 'stored');
      assert.is(await keys.once(SERVER, 'r-3', '{}', nothing, NOW), 'capped');
      assert.is(await keys.once(SERVER, 'r-1', '{}', nothing, NOW), 'replayed');
      assert.is(await keys.once(SERVER, 'r-1', '{"other":1}', nothing, NOW), 'conflict');
      const failing = async () => Promise.reject(new Error('disk gone'));
      assert.is(await keys.once('other', 'f-1', '{}', failing, NOW).catch(() => 'failed'), 'failed');
      assert.is(await keys.once('other', 'f-1', '{}', nothing, NOW), 'stored', 'a failed store frees its key');
      const tomorrow = Math.ceil(NOW / DAY) * DAY;
      assert.is(await keys.once(SERVER, 'r-3', '{}', nothing, tomorrow), 'stored');
    } finally {
      await state.redis!.quit();
      await redis.stop();
    }
  });
shared.run();
