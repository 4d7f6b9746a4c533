import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sampleStore } from '../server/charts/samples.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { createFileStorage } from '../server/storage.ts';
import { makeAccounts, makeWorkspace, startTestOrigin, type Accounts, type Workspace } from './helpers.ts';
import { fillDisk, mountSmallDisk, type SmallDisk } from './small-disk.ts';
import { NO_LOG } from '../server/helpers/log.ts';

// Issue 27, item 4: ingestion on a full disk answers 503 with Retry-After, never 500, and every
// sample answered 2xx, before the disk filled or after space was freed, is there after a restart.

const HOUR = 3_600_000;
const NOW = Date.parse('2026-11-20T12:30:00Z');
const ctx = {} as { workspace: Workspace; accounts: Accounts; disk: SmallDisk; origin?: RunningOrigin };

const full = suite('ingestion with STORAGE_DIR on a full disk');
full.before(async () => {
  ctx.disk = await mountSmallDisk(512);
  ctx.workspace = { ...(await makeWorkspace()), storageDir: join(ctx.disk.dir, 'storage') };
  ctx.accounts = await makeAccounts(ctx.workspace);
});
full.after(async () => {
  await ctx.origin?.close();
  await ctx.disk.unmount();
  await ctx.workspace.remove();
});

full('answers 503 with Retry-After and a JSON error while full; nothing answered 2xx is lost', async () => {
  const start = () =>
    startTestOrigin(ctx.workspace, {
      storage: createFileStorage(ctx.workspace.storageDir),
      now: () => NOW,
      logger: NO_LOG,
    });
  ctx.origin = await start();
  const { id, ingestKey } = ctx.accounts.publicServer;
  /** Answered 2xx, per hour: what the store must hold after the restart. */
  const acknowledged = new Map<number, number>();
  const statuses: number[] = [];
  let sent = 0;
  const post = async (hoursAgo: number, withKey: boolean) => {
    const at = Math.floor(NOW / HOUR) * HOUR - hoursAgo * HOUR + 60_000;
    const answer = await fetch(`${ctx.origin!.url}/api/servers/${id}/stats`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ingestKey}`,
        ...(withKey ? { 'idempotency-key': `full-disk-${sent++}` } : {}),
      },
      body: JSON.stringify({ samples: [{ at: new Date(at).toISOString(), players: 7 }] }),
    });
    statuses.push(answer.status);
    if (answer.status === 204) acknowledged.set(at, (acknowledged.get(at) ?? 0) + 1);
    return answer;
  };

  for (const hoursAgo of [1, 2, 30]) assert.is((await post(hoursAgo, hoursAgo === 2)).status, 204);
  assert.ok((await fillDisk(ctx.disk.dir)) > 0);
  for (const hoursAgo of [1, 3, 30, 50, 1, 3]) {
    const answer = await post(hoursAgo, hoursAgo === 3);
    assert.is(answer.status, 503, `while full: ${statuses.join()}`);
    assert.ok(Number(answer.headers.get('retry-after')) >= 1, 'Retry-After');
    assert.match(((await answer.json()) as { error: string }).error, /no space left/);
  }
  await rm(join(ctx.disk.dir, 'filler'));
  for (const hoursAgo of [1, 3, 50]) assert.is((await post(hoursAgo, hoursAgo === 3)).status, 204);
  assert.not.ok(statuses.includes(500), statuses.join());

  await ctx.origin.close();
  ctx.origin = await start();
  const buckets = await sampleStore(createFileStorage(ctx.workspace.storageDir)).range(id, NOW - 3 * 24 * HOUR, NOW);
  const stored = new Map(buckets.map((bucket) => [bucket.hour, bucket.count]));
  for (const [at, count] of acknowledged)
    assert.is(stored.get(Math.floor(at / HOUR) * HOUR), count, `${new Date(at).toISOString()}: ${count} answered 204`);
  assert.is(
    [...stored.values()].reduce((a, b) => a + b, 0),
    [...acknowledged.values()].reduce((a, b) => a + b, 0),
    'nothing refused was stored either',
  );
});

full.run();
