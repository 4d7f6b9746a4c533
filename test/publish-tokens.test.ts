import { suite, type Test } from 'uvu';
import * as assert from 'uvu/assert';
import { hashSecret, newSecret } from '../server/http/auth.ts';
import type { PublishTokenRecord } from '../server/publish-tokens/schema.ts';
import { publishTokenStore } from '../server/publish-tokens/store.ts';
import type { StateStore } from '../server/storage.ts';
import { BACKENDS, openBackend, type StoreBackend } from './store-backends.ts';

// Issue 30 item 1: the publishing-token store's contract, run unchanged against the embedded
// store's files and a real Redis (as test/store-contract.test.ts runs the other stores').

type Context = { backend: StoreBackend };

const NOW = Date.parse('2030-05-01T12:00:00.000Z');
const MINUTE = 60_000;

/** A token and its record as `depot token add` makes them, created `i` seconds after NOW. */
function issued(i: number, fields: Partial<PublishTokenRecord> = {}) {
  const token = newSecret('dpp');
  const record: PublishTokenRecord = {
    id: `tok_${String(i).padStart(12, '0')}`,
    username: 'alice',
    name: `ci ${i}`,
    createdAt: new Date(NOW + i * 1000).toISOString(),
    expiresAt: null,
    lastUsedAt: null,
    tokenHash: hashSecret(token),
    ...fields,
  };
  return { token, record };
}

const storeOf = (state: StateStore) => publishTokenStore(state.storage, state.redis);

/** The error `promise` rejects with; a failure when it resolves. */
const rejection = (promise: Promise<unknown>): Promise<Error> =>
  promise.then(
    () => assert.unreachable('resolved where it should have failed') as never,
    (error: unknown) => error as Error,
  );

function contract(test: Test<Context>) {
  test('a token is found by its digest, in this and another process; listed oldest first', async ({ backend }) => {
    const { state, another } = await backend.fresh();
    const store = storeOf(state);
    const second = issued(2, { name: null, expiresAt: new Date(NOW + 90 * 86_400_000).toISOString() });
    const first = issued(1);
    await store.add(second.record);
    await store.add(first.record);
    assert.equal(await store.find(hashSecret(first.token)), first.record);
    assert.equal(await storeOf(await another()).find(hashSecret(second.token)), second.record);
    assert.is(await store.find(hashSecret(newSecret('dpp'))), null, 'an unknown token');
    assert.equal(await store.list(), [first.record, second.record]);
  });

  test('revoked: gone at once for every process; a second revoke finds nothing', async ({ backend }) => {
    const { state, another } = await backend.fresh();
    const store = storeOf(state);
    const kept = issued(1);
    const revoked = issued(2);
    await store.add(kept.record);
    await store.add(revoked.record);
    const other = storeOf(await another());
    assert.equal(await other.find(revoked.record.tokenHash), revoked.record);
    assert.equal(await store.revoke(revoked.record.id), revoked.record);
    assert.is(await other.find(revoked.record.tokenHash), null, 'the other process reads no stale copy');
    assert.is(await other.revoke(revoked.record.id), null);
    assert.is(await store.revoke('tok_ffffffffffff'), null);
    assert.equal(await other.list(), [kept.record]);
  });

  test('lastUsedAt is written at most once a minute', async ({ backend }) => {
    const { state, another } = await backend.fresh();
    const store = storeOf(state);
    const { record } = issued(1);
    await store.add(record);
    const lastUsed = async () => (await storeOf(await another()).find(record.tokenHash))!.lastUsedAt;
    await store.markUsed(record.tokenHash, NOW);
    assert.is(await lastUsed(), new Date(NOW).toISOString());
    await store.markUsed(record.tokenHash, NOW + MINUTE - 1);
    assert.is(await lastUsed(), new Date(NOW).toISOString(), 'within the minute: unchanged');
    await store.markUsed(record.tokenHash, NOW + MINUTE);
    assert.is(await lastUsed(), new Date(NOW + MINUTE).toISOString());
    const { lastUsedAt: _at, ...rest } = (await store.find(record.tokenHash))!;
    const { lastUsedAt: _none, ...added } = record;
    assert.equal(rest, added, 'nothing else changed');
  });

  test('marking a token used never brings back a revoked one, whatever the order', async ({ backend }) => {
    const { state, another } = await backend.fresh();
    const store = storeOf(state);
    const other = storeOf(await another());
    const read = issued(50);
    await store.add(read.record);
    // A request read the token, then the CLI revoked it, then the request marks it used.
    assert.ok(await store.find(read.record.tokenHash));
    await other.revoke(read.record.id);
    await store.markUsed(read.record.tokenHash, NOW);
    assert.is(await other.find(read.record.tokenHash), null, 'revoked after it was read');
    for (let i = 0; i < 10; i++) {
      const { record } = issued(i);
      await store.add(record);
      // The request's write and the CLI's revoke race, from two processes' stores.
      await Promise.all([store.markUsed(record.tokenHash, NOW + i * MINUTE), other.revoke(record.id)]);
      assert.is(await store.find(record.tokenHash), null, `round ${i}`);
    }
    await store.markUsed(issued(99).record.tokenHash, NOW);
    assert.equal(await store.list(), [], 'marking an unknown token writes nothing');
  });

  test('a token that cannot be stored fails the add; the store reads whole after', async ({ backend }) => {
    const { state } = await backend.fresh();
    const store = storeOf(state);
    const kept = issued(1);
    await store.add(kept.record);
    await backend.break();
    try {
      const lost = issued(2, { name: 'x'.repeat(64) });
      assert.ok(backend.isBrokenError(await rejection(store.add(lost.record))));
    } finally {
      await backend.mend();
    }
    assert.equal(await store.list(), [kept.record]);
  });
}

for (const name of BACKENDS) {
  const test = suite<Context>(`publishTokenStore contract (${name})`, {} as Context);
  test.before(async (context) => {
    context.backend = await openBackend(name);
  });
  test.after(async (context) => {
    await context.backend?.close();
  });
  contract(test);
  test.run();
}
