import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningOrigin } from '../server/origin.ts';
import { redisReady } from '../server/redis.ts';
import { createFileStorage, createRedisStorage, type StateStore } from '../server/storage.ts';
import type { WebhookRecord } from '../server/webhooks/schema.ts';
import { outboxKey, webhookStore } from '../server/webhooks/store.ts';
import {
  findProgram,
  makeWorkspace,
  startRedis,
  startTestOrigin,
  until,
  type RedisServer,
  type Workspace,
} from './helpers.ts';
import { refusingUrl, startReceiver, type Receiver } from './webhook-receiver.ts';

// One dead webhook receiver must not delay the others: with more than a round's worth of retries
// waiting for it (the loop once looked at the 100 oldest outbox entries only), new deliveries to
// two live receivers still arrive within a few seconds, on the file store and on Redis.

/** Retries of the dead receiver's deliveries waiting in the outbox: more than the old round of 100. */
const DEAD_BACKLOG = 120;
/** New deliveries per live receiver, and how long they may take to arrive (polls every 200 ms). */
const LIVE_DELIVERIES = 5;
const PROMPTLY_MS = 5000;

type Dead = '500' | 'hang' | 'refused';
type StoreKind = 'files' | 'redis';

const REDIS = findProgram('redis-server');
if (!REDIS) console.warn('webhook-fairness.test.ts: redis-server not installed, the Redis cases not run');

const CASES: [StoreKind, Dead][] = [
  ['files', '500'],
  ['files', 'hang'],
  ...(REDIS
    ? ([
        ['redis', 'refused'],
        ['redis', 'hang'],
      ] as [StoreKind, Dead][])
    : []),
];

const fairness = suite('one dead webhook receiver, two live ones');
const ctx = {} as { workspace: Workspace; redis?: RedisServer };
fairness.before(async () => {
  ctx.workspace = await makeWorkspace();
  if (REDIS) ctx.redis = await startRedis(REDIS);
});
fairness.after(async () => {
  await ctx.redis?.stop();
  await ctx.workspace.remove();
});

const webhookTo = (url: string, n: number): WebhookRecord => ({
  id: `wh-${String(n).padStart(12, '0')}`,
  url,
  format: 'json',
  events: ['release'],
  secret: `dpw_${'s'.repeat(43)}`,
  createdAt: new Date(Date.now() + n).toISOString(),
});

for (const [kind, dead] of CASES) {
  fairness(
    `${kind}: ${DEAD_BACKLOG} retries waiting for a receiver that ${dead === '500' ? 'answers 500' : dead === 'hang' ? 'never answers' : 'refuses connections'} delay no new delivery to the live ones`,
    async () => {
      const hanging = await startReceiver(() => 'hang');
      const failing = await startReceiver(() => 500);
      const deadUrl = dead === 'hang' ? hanging.url : dead === '500' ? failing.url : await refusingUrl();
      const deadReceiver = dead === 'hang' ? hanging : failing;
      const live: Receiver[] = [await startReceiver(), await startReceiver()];
      const storageDir = `${ctx.workspace.dir}/storage-${kind}-${dead}`;
      const state: StateStore =
        kind === 'redis' ? createRedisStorage(ctx.redis!.url) : { storage: createFileStorage(storageDir) };
      if (state.redis) {
        assert.ok(await redisReady(state.redis, 5000));
        await state.redis.flushall();
      }
      const store = webhookStore(state.storage, state.redis);
      let origin: RunningOrigin | null = null;
      try {
        const [deadHook, ...liveHooks] = [
          webhookTo(`${deadUrl}/dead`, 1),
          webhookTo(`${live[0]!.url}/a`, 2),
          webhookTo(`${live[1]!.url}/b`, 3),
        ];
        for (const hook of [deadHook!, ...liveHooks]) await store.add(hook);
        for (let i = 0; i < DEAD_BACKLOG; i++)
          await store.enqueue(deadHook!.id, { event: 'ping', webhookId: deadHook!.id }, Date.now());

        // Failed attempts wait a minute for their retry; the loop polls every 200 ms.
        origin = await startTestOrigin(ctx.workspace, {
          storage: undefined,
          storageDir,
          ...(state.redis ? { redisUrl: ctx.redis!.url } : {}),
          webhookRetryBaseMs: 60_000,
          webhookTimeoutMs: 1000,
        });
        // The dead receiver's deliveries have been tried (a round's worth of quick failures, a hang its first).
        if (dead === '500') await until(() => deadReceiver.received.length >= 100, 'the dead deliveries tried', 30_000);
        else if (dead === 'hang') await until(() => deadReceiver.received.length >= 1, 'a dead delivery tried');
        else
          await until(
            async () => (await store.deliveries(deadHook!.id)).pending.filter((d) => d.attempts > 0).length >= 100,
            'the refused deliveries tried',
            30_000,
          );

        const startedAt = Date.now();
        const sent: string[] = [];
        for (let i = 0; i < LIVE_DELIVERIES; i++)
          for (const hook of liveHooks)
            sent.push((await store.enqueue(hook.id, { event: 'ping', webhookId: hook.id }, Date.now())).id);
        await until(
          () => live.every((r) => r.succeeded.length === LIVE_DELIVERIES),
          () =>
            `every live delivery arrived (${live.map((r) => r.succeeded.length).join(' and ')} of ${LIVE_DELIVERIES})`,
          PROMPTLY_MS,
        );
        const waited = Date.now() - startedAt;
        assert.ok(waited <= PROMPTLY_MS, `the live deliveries took ${waited} ms`);
        assert.equal(
          [...live[0]!.succeeded, ...live[1]!.succeeded].sort(),
          [...sent].sort(),
          'each live delivery arrived once',
        );
        // The dead receiver's deliveries are all still in the outbox, waiting for their retries.
        const { pending, finished } = await store.deliveries(deadHook!.id);
        assert.equal([pending.length, finished.length], [DEAD_BACKLOG, 0]);
        // A receiver has its request before the origin writes the outcome: each live delivery leaves
        // the outbox just after it arrived (under load, after this test looked: once in a full run).
        const livePending = async () =>
          (await Promise.all(liveHooks.map(async (hook) => (await store.deliveries(hook.id)).pending.length))).reduce(
            (sum, n) => sum + n,
          );
        await until(async () => (await livePending()) === 0, 'the live deliveries leave the outbox');
        assert.is(
          live[0]!.succeeded.length + live[1]!.succeeded.length,
          2 * LIVE_DELIVERIES,
          'and none was sent twice',
        );
      } finally {
        await origin?.close();
        if (state.redis) await state.redis.quit();
        await state.storage.dispose();
        for (const receiver of [hanging, failing, ...live]) await receiver.stop();
      }
    },
  );
}

fairness('an outbox written before its due index existed (an upgrade, a migration) is still delivered', async () => {
  const receiver = await startReceiver();
  const storageDir = `${ctx.workspace.dir}/storage-upgrade`;
  const storage = createFileStorage(storageDir);
  let origin: RunningOrigin | null = null;
  try {
    const hook = webhookTo(`${receiver.url}/old`, 4);
    await webhookStore(storage).add(hook);
    // As an older depot wrote it: the entry alone.
    const at = new Date().toISOString();
    const id = 'delivery-0000000000001-0123456789ab';
    await storage.setItem(outboxKey({ webhookId: hook.id, id }), {
      ...{ id, webhookId: hook.id, payload: { event: 'ping', webhookId: hook.id }, createdAt: at },
      ...{ state: 'pending', nextAttemptAt: at, attempts: 0, recent: [] },
    });
    origin = await startTestOrigin(ctx.workspace, { storage: undefined, storageDir, webhookRetryBaseMs: 200 });
    await until(() => receiver.succeeded.length === 1, 'the old entry delivered');
    assert.equal(receiver.succeeded, [id]);
  } finally {
    await origin?.close();
    await storage.dispose();
    await receiver.stop();
  }
});

fairness('an index entry left stale by a crash between two writes is put right when picked', async () => {
  const receiver = await startReceiver();
  const storageDir = `${ctx.workspace.dir}/storage-stale`;
  const storage = createFileStorage(storageDir);
  let origin: RunningOrigin | null = null;
  try {
    const hook = webhookTo(`${receiver.url}/stale`, 5);
    const store = webhookStore(storage);
    await store.add(hook);
    const later = await store.enqueue(hook.id, { event: 'ping', webhookId: hook.id }, Date.now());
    const gone = await store.enqueue(hook.id, { event: 'ping', webhookId: hook.id }, Date.now());
    // As a crash leaves them: one entry rescheduled an hour on without its index entry moving, one
    // removed without its index entry.
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    await storage.setItem(outboxKey(later), { ...later, attempts: 1, nextAttemptAt: inAnHour });
    await storage.removeItem(outboxKey(gone));
    const indexKeys = () => storage.getKeys('webhook-due');
    assert.is((await indexKeys()).length, 2);
    origin = await startTestOrigin(ctx.workspace, { storage: undefined, storageDir, webhookRetryBaseMs: 200 });
    await until(async () => (await indexKeys()).length === 1, 'the stale index entries put right');
    const [key] = await indexKeys();
    assert.ok(key!.endsWith(`:${Date.parse(inAnHour)}-${later.id}`), `filed under its new time: ${key}`);
    assert.equal(await store.dueEntries(Date.now(), 10), new Map(), 'nothing due now');
    assert.is(receiver.received.length, 0, 'nothing sent before its time');
  } finally {
    await origin?.close();
    await storage.dispose();
    await receiver.stop();
  }
});

fairness.run();
