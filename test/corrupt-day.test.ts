import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DayRecord, sampleStore } from '../server/charts/samples.ts';
import { redisReady } from '../server/redis.ts';
import { createFileStorage, createRedisStorage } from '../server/storage.ts';
import {
  findProgram,
  makeAccounts,
  makeWorkspace,
  runDepot,
  startRedis,
  startTestOrigin,
  type Accounts,
  type Workspace,
} from './helpers.ts';
import { collectLog } from './collect-log.ts';
import { NO_LOG } from '../server/helpers/log.ts';

// Issue 27, item 4: a player-count day that does not parse (a torn or hand-edited file) is moved
// aside and said, never replaced in silence by the next samples.

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-20T12:30:00Z');
const HOUR_AT = '2026-11-20T10:15:00Z';
const DAMAGE = ['{"10": [5, 5, 1], "11": [7, 7', '', 'null', '{"10": "many"}', '{"99": [1, 1, 1]}'];

const ctx = {} as { workspace: Workspace; accounts: Accounts };
const corrupt = suite('a stored player-count day that does not parse');
corrupt.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.accounts = await makeAccounts(ctx.workspace);
});
corrupt.after(() => ctx.workspace.remove());

/** The day's folder, with `damage` as the stored day of HOUR_AT. */
async function damagedDay(damage: string) {
  const folder = join(ctx.workspace.storageDir, 'samples', ctx.accounts.publicServer.id);
  const day = String(Math.floor(Date.parse(HOUR_AT) / DAY));
  await mkdir(folder, { recursive: true });
  for (const name of await readdir(folder)) await rm(join(folder, name), { recursive: true });
  await writeFile(join(folder, day), damage);
  const aside = async () => (await readdir(folder)).filter((name) => name.startsWith(`${day}.corrupt-`));
  return { file: join(folder, day), folder, aside };
}

corrupt('ingestion: moved aside byte for byte, said once, and the day starts afresh with the new samples', async () => {
  const { id, ingestKey } = ctx.accounts.publicServer;
  for (const damage of DAMAGE) {
    const day = await damagedDay(damage);
    const warnings: string[] = [];
    const origin = await startTestOrigin(ctx.workspace, {
      storage: createFileStorage(ctx.workspace.storageDir),
      now: () => NOW,
      logger: collectLog(warnings),
    });
    try {
      for (const players of [40, 41]) {
        const answer = await fetch(`${origin.url}/api/servers/${id}/stats`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ingestKey}` },
          body: JSON.stringify({ samples: [{ at: HOUR_AT, players }] }),
        });
        assert.is(answer.status, 204);
      }
    } finally {
      await origin.close();
    }
    const said = warnings.filter((line) => line.includes('did not parse'));
    assert.is(said.length, 1, `${JSON.stringify(damage)}: ${warnings.join('\n')}`);
    const aside = await day.aside();
    assert.is(aside.length, 1, JSON.stringify(damage));
    assert.ok(said[0]!.includes(aside[0]!), 'the warning names the kept file');
    assert.is(await readFile(join(day.folder, aside[0]!), 'utf8'), damage, 'kept as it was');
    // The day as read (the journal segments it names, `folded`, are no samples).
    assert.equal(DayRecord.parse(JSON.parse(await readFile(day.file, 'utf8'))), { '10': [41, 81, 2] });
  }
});

corrupt('`depot stats add` keeps the damaged day aside too, and says so on stderr', async () => {
  const day = await damagedDay(DAMAGE[0]!);
  const result = await runDepot(['stats', 'add', ctx.accounts.publicServer.id, '12', '--at', HOUR_AT], ctx.workspace);
  assert.is(result.code, 0, result.stderr);
  assert.match(result.stderr, /did not parse/);
  assert.is((await day.aside()).length, 1);
  assert.equal(JSON.parse(await readFile(day.file, 'utf8')), { '10': [12, 12, 1] });
});

const REDIS = findProgram('redis-server');
if (!REDIS) console.warn('corrupt-day.test.ts: redis-server not installed, the Redis case is not run');
if (REDIS)
  corrupt('with Redis: a day that is not a day record is kept aside too, and folding goes on', async () => {
    const redis = await startRedis(REDIS);
    const state = createRedisStorage(redis.url, NO_LOG);
    try {
      assert.ok(await redisReady(state.redis!, 5000));
      const at = Date.parse(HOUR_AT);
      const server = ctx.accounts.publicServer.id;
      for (const damage of DAMAGE.filter((text) => text !== '')) {
        const warnings: string[] = [];
        const samples = sampleStore(state.storage, state.redis, collectLog(warnings));
        const key = `depot:samples:${server}:${Math.floor(at / DAY)}`;
        for (const old of await state.redis!.keys(`${key}*`)) await state.redis!.del(old);
        await state.redis!.set(key, damage);
        await samples.add(server, [{ at, players: 40 }]);
        await samples.add(server, [{ at, players: 41 }]);
        assert.is(warnings.length, 1, `${damage}: ${warnings.join('\n')}`);
        const aside = await state.redis!.keys(`${key}.corrupt-*`);
        assert.is(aside.length, 1);
        assert.is(await state.redis!.get(aside[0]!), damage);
        assert.equal(JSON.parse((await state.redis!.get(key))!), { '10': [41, 81, 2] });
      }
    } finally {
      await state.redis!.quit();
      await redis.stop();
    }
  });

corrupt.run();
