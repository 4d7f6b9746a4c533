import { suite, type Test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AuditRecord } from '../server/audit/schema.ts';
import { auditStore } from '../server/audit/store.ts';
import { idempotencyStore } from '../server/charts/idempotency.ts';
import { sampleStore } from '../server/charts/samples.ts';
import { openJournaledSampleStore, type JournaledSampleStore } from '../server/charts/samples/journaled.ts';
import { chartUrlKeys } from '../server/charts/signed-url.ts';
import { countedOf } from '../server/downloads/counted.ts';
import { downloadStore } from '../server/downloads/store.ts';
import { DAY, HOUR } from '../server/helpers/duration.ts';
import type { StateStore } from '../server/storage.ts';
import { outboxKey, webhookStore, type WebhookStore } from '../server/webhooks/store.ts';
import type { WebhookRecord } from '../server/webhooks/schema.ts';
import { BACKENDS, openBackend, type StoreBackend } from './store-backends.ts';
import { collectLog } from './collect-log.ts';
import { NO_LOG, type Log } from '../server/helpers/log.ts';

// Issue 28 item 4: one contract per store, run unchanged against both of its backends (the
// embedded store's files and Redis), as unstorage runs one test suite against each of its drivers.
// What is asserted is what the stores did before they were split, errors included.

/** `journaled`: the samples contract runs over the origin's journaled store too (the first store a test opens; others, as another process, write days directly). */
type Context = { backend: StoreBackend; journaled?: boolean };
type Contract = (test: Test<Context>) => void;

const NOW = Date.now();
const TODAY = Math.floor(NOW / DAY);
const VERSION = 'plugin-1768035600000-f8d161e085';

/** The error `promise` rejects with; a failure when it resolves. */
const rejection = (promise: Promise<unknown>): Promise<Error> =>
  promise.then(
    () => assert.unreachable('resolved where it should have failed') as never,
    (error: unknown) => error as Error,
  );

const downloads: Contract = (test) => {
  const counted = (client: string, software?: 'PaperMC') =>
    countedOf({ day: TODAY, versionId: VERSION, software, client });

  test('counts a client once per version and day, across processes sharing the store', async ({ backend }) => {
    const { state, another } = await backend.fresh();
    const store = downloadStore(state.storage, state.redis);
    const batch = [counted('192.0.2.1'), counted('192.0.2.2'), counted('192.0.2.1'), counted('192.0.2.3', 'PaperMC')];
    assert.is(await store.add(batch), 3);
    assert.is(await store.add(batch), 0);
    assert.ok(store.isCounted(TODAY, batch[0]!), 'what it stored, it knows without asking');
    const other = await another();
    assert.is(await downloadStore(other.storage, other.redis).add(batch), 0, 'another process counts none again');
    const read = (await store.read()).sort((a, b) => String(a.software).localeCompare(String(b.software)));
    assert.equal(read, [
      { day: TODAY, versionId: VERSION, software: 'PaperMC', downloads: 1 },
      { day: TODAY, versionId: VERSION, software: undefined, downloads: 2 },
    ]);
    assert.is(await store.total(), 3);
  });

  test('a day past counting reads the same, and counts no more', async ({ backend }) => {
    const { state } = await backend.fresh();
    await downloadStore(state.storage, state.redis).add([counted('192.0.2.1'), counted('192.0.2.2')]);
    const later = downloadStore(state.storage, state.redis, () => NOW + 9 * DAY);
    for (let i = 0; i < 2; i++) assert.is(await later.total(), 2);
    assert.equal(await later.read(), [{ day: TODAY, versionId: VERSION, software: undefined, downloads: 2 }]);
  });

  test('the total is kept until this process counts, whatever other processes count', async ({ backend }) => {
    const { state, another } = await backend.fresh();
    const store = downloadStore(state.storage, state.redis);
    await store.add([counted('192.0.2.1')]);
    assert.is(await store.total(), 1);
    const other = await another();
    await downloadStore(other.storage, other.redis).add([counted('192.0.2.2')]);
    assert.is(await store.total(), 1, 'within TOTAL_TTL_MS');
    await store.add([counted('192.0.2.3')]);
    assert.is(await store.total(), 3);
  });

  test('a batch that cannot be stored fails, and counts once when retried', async ({ backend }) => {
    const { state } = await backend.fresh();
    const store = downloadStore(state.storage, state.redis);
    await store.add([counted('192.0.2.1')]);
    const batch = Array.from({ length: 200 }, (_, i) => counted(`198.51.100.${i}`));
    await backend.break();
    try {
      assert.ok(backend.isBrokenError(await rejection(store.add(batch))));
    } finally {
      await backend.mend();
    }
    assert.is(await store.add(batch), 200);
    assert.is(await store.add(batch), 0);
    assert.is((await store.read())[0]!.downloads, 201);
  });
};

const samples: Contract = (test) => {
  const SERVER = '7f000000-0000-4000-8000-000000000001';
  const hour = TODAY * DAY + 10 * HOUR;
  const opened: JournaledSampleStore[] = [];
  /** The store under test: the journaled one over files when the run says so (closed after the test). */
  const openSamples = async (context: Context, state: StateStore, log?: Log) => {
    const journaled = context.journaled ? await openJournaledSampleStore(state.storage, log ?? NO_LOG) : null;
    if (journaled) opened.push(journaled);
    return journaled ?? sampleStore(state.storage, state.redis, log);
  };
  test.after.each(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  test('folds samples into hourly max, sum and count; concurrent adds from two processes lose nothing', async (context) => {
    const { backend } = context;
    const { state, another } = await backend.fresh();
    const other = await another();
    const stores = [await openSamples(context, state), sampleStore(other.storage, other.redis)];
    await stores[0]!.add(SERVER, [
      { at: hour + 5 * 60_000, players: 3 },
      { at: hour + 55 * 60_000, players: 9 },
      { at: hour + HOUR, players: 4 },
    ]);
    // Another process reads what the journaled store has folded; the journaled store, what it journaled too.
    const reader = stores[context.journaled ? 0 : 1]!;
    assert.equal(await reader.range(SERVER, TODAY * DAY, TODAY * DAY + 23 * HOUR), [
      { hour, max: 9, sum: 12, count: 2 },
      { hour: hour + HOUR, max: 4, sum: 4, count: 1 },
    ]);
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => stores[i % 2]!.add(SERVER, [{ at: hour + 2 * HOUR, players: i }])),
    );
    assert.equal((await stores[0]!.range(SERVER, hour + 2 * HOUR, hour + 2 * HOUR))[2], {
      hour: hour + 2 * HOUR,
      max: 49,
      sum: 1225,
      count: 50,
    });
  });

  test('a stored day that does not parse is kept aside, said once, and the day starts afresh', async (context) => {
    const { state } = await context.backend.fresh();
    const key = `samples:${SERVER}:${TODAY}`;
    await state.storage.setItemRaw(key, 'not a day {');
    const warnings: string[] = [];
    const store = await openSamples(context, state, collectLog(warnings));
    await store.add(SERVER, [{ at: hour, players: 7 }]);
    if (context.journaled) await opened.splice(0)[0]!.close(); // folded at the latest when it stops
    assert.equal(await store.range(SERVER, hour, hour), [{ hour, max: 7, sum: 7, count: 1 }]);
    assert.is(warnings.length, 1);
    assert.match(warnings[0]!, `${key} did not parse: kept as ${key}.corrupt-`);
    const aside = (await state.storage.getKeys(`samples:${SERVER}`)).filter((k) => k.startsWith(`${key}.corrupt-`));
    assert.is(aside.length, 1);
    assert.is(String(await state.storage.getItemRaw(aside[0]!)), 'not a day {', 'kept byte for byte');
  });

  test('samples that cannot be stored fail the add; what was stored stays', async (context) => {
    const { backend } = context;
    const { state } = await backend.fresh();
    const store = await openSamples(context, state);
    await store.add(SERVER, [{ at: hour, players: 1 }]);
    await backend.break();
    try {
      assert.ok(backend.isBrokenError(await rejection(store.add(SERVER, [{ at: hour, players: 2 }]))));
    } finally {
      await backend.mend();
    }
    await store.add(SERVER, [{ at: hour, players: 3 }]);
    assert.equal(await store.range(SERVER, hour, hour), [{ hour, max: 3, sum: 4, count: 2 }]);
  });
};

const idempotency: Contract = (test) => {
  const SERVER = '5b1d7a40-0000-4000-8000-000000000001';
  const nothing = async () => {};

  test('stored, replayed, conflict, across processes; a failed store frees its key', async ({ backend }) => {
    const { state, another } = await backend.fresh();
    const keys = idempotencyStore(state.storage, state.redis);
    assert.is(await keys.once(SERVER, 'k-1', '{"players":1}', nothing, NOW), 'stored');
    const other = await another();
    const elsewhere = idempotencyStore(other.storage, other.redis);
    let ran = false;
    assert.is(await elsewhere.once(SERVER, 'k-1', '{"players":1}', async () => void (ran = true), NOW + 1), 'replayed');
    assert.not.ok(ran, 'a replay stores nothing');
    assert.is(await elsewhere.once(SERVER, 'k-1', '{"players":2}', nothing, NOW + 1), 'conflict');
    const failing = () => Promise.reject(new Error('disk gone'));
    assert.is((await rejection(keys.once(SERVER, 'f-1', '{}', failing, NOW))).message, 'disk gone');
    assert.is(await keys.once(SERVER, 'f-1', '{}', nothing, NOW), 'stored', 'a failed store frees its key');
  });

  test('a server stores at most maxKeysPerDay new keys per UTC day; replays still answer', async ({ backend }) => {
    const { state } = await backend.fresh();
    const keys = idempotencyStore(state.storage, state.redis, { maxKeysPerDay: 2 });
    assert.is(keys.maxKeysPerDay, 2);
    for (const key of ['c-1', 'c-2']) assert.is(await keys.once(SERVER, key, '{}', nothing, NOW), 'stored');
    let ran = false;
    assert.is(await keys.once(SERVER, 'c-3', '{}', async () => void (ran = true), NOW), 'capped');
    assert.not.ok(ran, 'nothing is stored for a refused key');
    assert.is(await keys.once(SERVER, 'c-1', '{}', nothing, NOW), 'replayed');
    assert.is(await keys.once('another-server', 'c-3', '{}', nothing, NOW), 'stored', 'other servers are not held');
    const tomorrow = (TODAY + 1) * DAY;
    assert.is(await keys.once(SERVER, 'c-3', '{}', nothing, tomorrow), 'stored', 'a new UTC day, a new allowance');
  });

  test('a key that cannot be stored: Redis down stores nothing; a full disk stores the samples and says so', async ({
    backend,
  }) => {
    const { state } = await backend.fresh();
    const warnings: string[] = [];
    const keys = idempotencyStore(state.storage, state.redis, { log: collectLog(warnings) });
    let ran = false;
    const store = async () => void (ran = true);
    await backend.break();
    try {
      if (backend.name === 'redis') {
        assert.ok(backend.isBrokenError(await rejection(keys.once(SERVER, 'b-1', '{}', store, NOW))));
        assert.not.ok(ran);
      } else {
        assert.is(await keys.once(SERVER, 'b-1', '{}', store, NOW), 'stored');
        assert.ok(ran);
        assert.match(warnings[0] ?? '', 'but not their Idempotency-Key');
      }
    } finally {
      await backend.mend();
    }
  });
};

const HOOK: WebhookRecord = {
  id: 'wh-0123456789ab',
  url: 'https://example.com/hook',
  format: 'json',
  events: ['release'],
  secret: `dpw_${'a'.repeat(43)}`,
  createdAt: '2026-01-01T00:00:00.000Z',
};
const ping = { event: 'ping', webhookId: HOOK.id } as const;

const webhooks: Contract = (test) => {
  const open = async (backend: StoreBackend): Promise<[WebhookStore, () => Promise<WebhookStore>, StateStore]> => {
    const { state, another } = await backend.fresh();
    const again = async () => {
      const other = await another();
      return webhookStore(other.storage, other.redis);
    };
    return [webhookStore(state.storage, state.redis), again, state];
  };

  test('webhooks: added, listed oldest first, read by id, removed with their deliveries', async ({ backend }) => {
    const [store] = await open(backend);
    const older = { ...HOOK, id: 'wh-00000000000f', createdAt: '2025-01-01T00:00:00.000Z' };
    await store.add(HOOK);
    await store.add(older);
    assert.equal(
      (await store.list()).map((hook) => hook.id),
      [older.id, HOOK.id],
    );
    assert.equal(await store.get(HOOK.id), HOOK);
    assert.is(await store.get('wh-ffffffffffff'), null);
    await store.enqueue(HOOK.id, ping, NOW);
    assert.ok(await store.remove(HOOK.id));
    assert.not.ok(await store.remove(HOOK.id));
    assert.equal(await store.deliveries(HOOK.id), { pending: [], finished: [] });
    assert.equal(await store.dueEntries(NOW + DAY, 10), new Map());
  });

  test('the outbox: due when enqueued, moved when rescheduled, logged and cut when finished', async ({ backend }) => {
    const [store, again] = await open(backend);
    await store.add(HOOK);
    const delivery = await store.enqueue(HOOK.id, ping, NOW);
    assert.equal(await store.pendingKeys(), [outboxKey(delivery)]);
    assert.equal(await (await again()).readDelivery(outboxKey(delivery)), delivery);
    assert.equal(await store.dueEntries(NOW - 1, 10), new Map());
    assert.equal(
      await store.dueEntries(NOW, 10),
      new Map([[HOOK.id, [{ webhookId: HOOK.id, id: delivery.id, due: NOW }]]]),
    );
    const later = { ...delivery, attempts: 1, nextAttemptAt: new Date(NOW + 60_000).toISOString() };
    await store.reschedule(later, delivery);
    assert.equal(await store.dueEntries(NOW, 10), new Map());
    assert.is((await store.dueEntries(NOW + 60_000, 10)).get(HOOK.id)?.[0]?.due, NOW + 60_000);
    assert.not.ok(await store.isFinished(later));
    await store.finish({ ...later, state: 'delivered' });
    assert.ok(await store.isFinished(later));
    assert.equal(await store.dueEntries(NOW + DAY, 10), new Map());
    for (let i = 1; i <= 21; i++) await store.finish(await store.enqueue(HOOK.id, ping, NOW + i));
    const { pending, finished } = await store.deliveries(HOOK.id);
    assert.is(pending.length, 0);
    assert.is(finished.length, 20, 'KEPT_DELIVERIES');
    assert.is(finished[0]!.createdAt, new Date(NOW + 2).toISOString(), 'the oldest go');
  });

  webhookIndexAndLease(test, open);

  test('a delivery that cannot be written fails the enqueue, and the outbox works on after', async ({ backend }) => {
    const [store] = await open(backend);
    await store.add(HOOK);
    await backend.break();
    try {
      assert.ok(backend.isBrokenError(await rejection(store.enqueue(HOOK.id, ping, NOW))));
    } finally {
      await backend.mend();
    }
    const delivery = await store.enqueue(HOOK.id, ping, NOW);
    assert.equal(await store.pendingKeys(), [outboxKey(delivery)]);
  });
};

function webhookIndexAndLease(
  test: Test<Context>,
  open: (backend: StoreBackend) => Promise<[WebhookStore, () => Promise<WebhookStore>, StateStore]>,
) {
  test('the index is put right: healed when picked, reconciled from the outbox', async ({ backend }) => {
    const [store, , state] = await open(backend);
    await store.add(HOOK);
    const gone = await store.enqueue(HOOK.id, ping, NOW);
    await state.storage.removeItem(outboxKey(gone));
    await store.healIndex({ webhookId: HOOK.id, id: gone.id, due: NOW });
    assert.equal(await store.dueEntries(NOW, 10), new Map(), 'an entry whose delivery is gone is removed');
    const unfiled = { ...gone, id: `delivery-${String(NOW).padStart(13, '0')}-0000000000aa` };
    await state.storage.setItem(outboxKey(unfiled), unfiled);
    const unreadable = `webhook-outbox:${HOOK.id}:delivery-${String(NOW).padStart(13, '0')}-0000000000bb`;
    await state.storage.setItem(unreadable, { not: 'a delivery' });
    assert.equal(await store.reconcileIndex(), { filed: 1, unreadable: [unreadable] });
    assert.is((await store.dueEntries(NOW, 10)).get(HOOK.id)?.[0]?.id, unfiled.id);
    assert.match((await rejection(store.readDelivery(unreadable))).message, 'is not a readable delivery');
  });

  test('one lease per delivery at a time, across processes; free again once released', async ({ backend }) => {
    const [store, again] = await open(backend);
    await store.add(HOOK);
    const delivery = await store.enqueue(HOOK.id, ping, NOW);
    const release = await store.claim(delivery, 30_000);
    assert.ok(release);
    assert.is(await store.claim(delivery, 30_000), null);
    assert.is(await (await again()).claim(delivery, 30_000), null, 'another process is refused too');
    await release();
    const next = await (await again()).claim(delivery, 30_000);
    assert.ok(next, 'free once released');
    await next();
  });
}

const chartUrlKey: Contract = (test) => {
  test('one generated key, shared by every process of the store; configured keys win', async ({ backend }) => {
    const { state, another } = await backend.fresh();
    const others = await Promise.all([another(), another(), another()]);
    const keys = await Promise.all([state, ...others].map((s) => chartUrlKeys([], s.storage, s.redis)));
    assert.match(keys[0]![0]!, /^[A-Za-z0-9_-]{43}$/);
    for (const key of keys) assert.equal(key, keys[0]);
    assert.equal(await chartUrlKeys(['configured'], state.storage, state.redis), ['configured']);
  });

  test('a stored key that is not a generated key is an error, never replaced', async ({ backend }) => {
    const { state } = await backend.fresh();
    await state.storage.setItem('chart-url-key', 'short');
    assert.match((await rejection(chartUrlKeys([], state.storage, state.redis))).message, 'stored chart-url-key');
    assert.is(await state.storage.getItem('chart-url-key'), 'short');
  });

  test('a key that cannot be stored fails', async ({ backend }) => {
    const { state } = await backend.fresh();
    await backend.break();
    try {
      assert.ok(backend.isBrokenError(await rejection(chartUrlKeys([], state.storage, state.redis))));
    } finally {
      await backend.mend();
    }
    assert.is((await chartUrlKeys([], state.storage, state.redis)).length, 1);
  });
};

/** The i-th record of a test: a name in two scripts and an emoji, which the files keep as ASCII escapes. */
const auditRecord = (i: number): AuditRecord => ({
  at: new Date(NOW + i).toISOString(),
  action: 'user add',
  target: `user-${i}`,
  actor: 'olivia',
  changes: { nickname: `Zoë Пётр 👩‍💻 ${i}`, private: i % 2 === 0, image: null },
});

const audit: Contract = (test) => {
  test('records appended by two processes at once read back whole, oldest first, in any script', async ({
    backend,
  }) => {
    const { state, another } = await backend.fresh();
    const other = await another();
    const logs = [auditStore(state.storage, state.redis), auditStore(other.storage, other.redis)];
    await logs[0]!.append(auditRecord(0));
    await logs[1]!.append(auditRecord(1));
    await Promise.all(Array.from({ length: 20 }, (_, i) => logs[i % 2]!.append(auditRecord(2 + i))));
    const third = await another();
    const { records, unreadable } = await auditStore(third.storage, third.redis).read();
    assert.is(unreadable, 0);
    assert.equal(records.slice(0, 2), [auditRecord(0), auditRecord(1)]);
    const byTarget = (a: AuditRecord, b: AuditRecord) => a.target.localeCompare(b.target);
    assert.equal(
      [...records].sort(byTarget),
      Array.from({ length: 22 }, (_, i) => auditRecord(i)).sort(byTarget),
      'every record once, none torn',
    );
  });

  test('a stored record that does not parse is skipped and counted; a torn last line is skipped, then cut', async ({
    backend,
  }) => {
    const { state } = await backend.fresh();
    const log = auditStore(state.storage, state.redis);
    await log.append(auditRecord(0));
    /** Stored as another writer (an older depot, a person, a killed process) left it. */
    const inject = async (text: string) => {
      if (state.redis) await state.redis.xadd('depot:audit', '*', 'record', text);
      else await state.storage.setItemRaw('audit.jsonl', String(await state.storage.getItemRaw('audit.jsonl')) + text);
    };
    await inject(backend.name === 'files' ? '{"at":"yesterday"}\n' : '{"at":"yesterday"}');
    await log.append(auditRecord(1));
    if (backend.name === 'files') {
      await inject(JSON.stringify(auditRecord(2)).slice(0, 40));
      assert.equal(await log.read(), { records: [auditRecord(0), auditRecord(1)], unreadable: 1 }, 'torn: skipped');
    }
    await log.append(auditRecord(3));
    assert.equal(await log.read(), { records: [auditRecord(0), auditRecord(1), auditRecord(3)], unreadable: 1 });
  });

  test('Redis keeps the newest maxRecords; the files keep every record', async ({ backend }) => {
    const { state } = await backend.fresh();
    const log = auditStore(state.storage, state.redis, { maxRecords: 3 });
    for (let i = 0; i < 5; i++) await log.append(auditRecord(i));
    const { records } = await log.read();
    assert.is(records.length, backend.name === 'redis' ? 3 : 5);
    assert.equal(records.slice(-3), [auditRecord(2), auditRecord(3), auditRecord(4)]);
  });

  test('a record that cannot be stored fails the append; the log reads whole after', async ({ backend }) => {
    const { state } = await backend.fresh();
    const log = auditStore(state.storage, state.redis);
    await log.append(auditRecord(0));
    await backend.break();
    try {
      // Larger than the slack of the file's last block, which a full disk still lets a short line into.
      const large = { ...auditRecord(1), changes: { changelog: 'x'.repeat(12_000) } };
      assert.ok(backend.isBrokenError(await rejection(log.append(large))));
    } finally {
      await backend.mend();
    }
    await log.append(auditRecord(2));
    assert.equal(await log.read(), { records: [auditRecord(0), auditRecord(2)], unreadable: 0 });
  });
};

const CONTRACTS = {
  auditStore: audit,
  downloadStore: downloads,
  sampleStore: samples,
  idempotencyStore: idempotency,
  webhookStore: webhooks,
  chartUrlKeys: chartUrlKey,
};

for (const name of BACKENDS)
  for (const [store, contract] of Object.entries(CONTRACTS)) {
    const test = suite<Context>(`${store} contract (${name})`, {} as Context);
    test.before(async (context) => {
      context.backend = await openBackend(name);
    });
    test.after(async (context) => {
      await context.backend?.close();
    });
    contract(test);
    test.run();
  }

// The origin's journaled samples (issue 32 item 4) keep the samples contract over files.
const journaled = suite<Context>('sampleStore contract (files, journaled)', { journaled: true } as Context);
journaled.before(async (context) => {
  context.backend = await openBackend('files');
});
journaled.after(async (context) => {
  await context.backend?.close();
});
samples(journaled);
journaled.run();
