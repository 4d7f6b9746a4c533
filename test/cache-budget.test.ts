import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RequestLog } from '../server/http/request-log.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { createFileStorage } from '../server/storage.ts';
import { TEMPORARY_FILE } from '../server/write-atomic.ts';
import { makeAccounts, makeWorkspace, startTestOrigin, until, type Accounts, type Workspace } from './helpers.ts';

// CACHE_MAX_BYTES: the embedded store's render caches stay under their cap whatever is asked for.
const CAP = 400_000;
const ctx = {} as { workspace: Workspace; accounts: Accounts; origin: RunningOrigin; log: RequestLog[] };
let clock = Date.now();

const start = async () => {
  ctx.log = [];
  ctx.origin = await startTestOrigin(ctx.workspace, {
    storage: createFileStorage(ctx.workspace.storageDir),
    cacheMaxBytes: CAP,
    now: () => clock,
    log: (entry) => ctx.log.push(entry),
  });
};

/** Bytes of the cache entries on disk. */
async function cachedBytes(): Promise<{ bytes: number; files: number }> {
  const entries = await readdir(join(ctx.workspace.storageDir, 'cache'), {
    recursive: true,
    withFileTypes: true,
  }).catch(() => []);
  let bytes = 0;
  let files = 0;
  for (const entry of entries) {
    if (!entry.isFile() || TEMPORARY_FILE.test(entry.name)) continue;
    const size = (await stat(join(entry.parentPath, entry.name)).catch(() => null))?.size; // null: evicted meanwhile
    if (size === undefined) continue;
    bytes += size;
    files++;
  }
  return { bytes, files };
}

const privateChart = (width: number) =>
  fetch(
    `${ctx.origin.url}/api/servers/${ctx.accounts.privateServer.id}/chart/players?format=png&days=30&width=${width}`,
    {
      headers: { authorization: `Bearer ${ctx.accounts.owner}` },
    },
  );
const brand = (size: number) => fetch(`${ctx.origin.url}/api/image/brand/papermc?size=${size}&format=png`);
/** How the last request to `path` was answered, from the request log. */
const answeredFrom = (path: string) => [...ctx.log].reverse().find((entry) => entry.path === path)?.cache;

const budget = suite('render caches bounded in bytes (CACHE_MAX_BYTES)');
budget.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.accounts = await makeAccounts(ctx.workspace);
  await start();
});
budget.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});

budget(
  "a crawler of distinct sizes (owners' private PNG charts, unlimited by SPEC 8, and brand sizes) never takes the cache past its cap",
  async () => {
    let peak = 0;
    for (let batch = 0; batch < 8; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          i % 2 ? privateChart(300 + batch * 10 + i) : brand(101 + batch * 10 + i),
        ),
      );
      for (const answer of answers) {
        assert.is(answer.status, 200);
        await answer.arrayBuffer();
      }
      const { bytes } = await cachedBytes();
      peak = Math.max(peak, bytes);
      assert.ok(bytes <= CAP, `after batch ${batch}: ${bytes} bytes cached, over the cap of ${CAP}`);
    }
    assert.ok(peak > CAP / 2, `the cache was used (${peak} bytes at most)`);
  },
);

budget('the least recently used entries go first: one read again stays, and is a hit after a restart', async () => {
  const kept = '/api/image/brand/papermc';
  assert.is((await brand(999)).status, 200);
  for (let i = 0; i < 30; i++) {
    assert.is((await privateChart(1000 + i * 10)).status, 200);
    assert.is((await brand(999)).status, 200); // used again: the most recent
  }
  await ctx.origin.close();
  await start(); // a new process has an empty memory cache: a hit now comes from disk
  assert.is((await brand(999)).status, 200);
  assert.is(answeredFrom(kept), 'hit', 'the entry read again and again is still on disk');
  assert.is((await privateChart(1000)).status, 200);
  assert.is(
    answeredFrom(`/api/servers/${ctx.accounts.privateServer.id}/chart/players`),
    'miss',
    'the oldest chart was evicted',
  );
  assert.is((await privateChart(1290)).status, 200);
  assert.is(
    answeredFrom(`/api/servers/${ctx.accounts.privateServer.id}/chart/players`),
    'hit',
    'the newest chart was kept',
  );
});

budget('expired entries are deleted from disk when the origin starts (and every 10 minutes)', async () => {
  assert.ok((await cachedBytes()).files > 0);
  await ctx.origin.close();
  clock += 2 * 3_600_000; // past every TTL (brand images 1 h, charts 5 min)
  await start();
  await until(async () => (await cachedBytes()).files === 0, 'the expired entries are swept');
});
budget.run();
