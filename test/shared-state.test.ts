import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sampleStore } from '../server/charts/samples.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { redisReady } from '../server/redis.ts';
import { createRedisStorage } from '../server/storage.ts';
import {
  findProgram,
  makeAccounts,
  makeWorkspace,
  runDepot,
  startRedis,
  startTestOrigin,
  until,
  type Accounts,
  type RedisServer,
  type Workspace,
} from './helpers.ts';
import { collectLog } from './collect-log.ts';
import { NO_LOG } from '../server/helpers/log.ts';

// REDIS_URL: every origin's state (servers, tokens, samples, caches) in one real redis-server.
const REDIS = findProgram('redis-server');
if (!REDIS)
  console.warn(
    'shared-state.test.ts: redis-server not installed, Redis tests not run (apt-get install -y redis-server; .ci/run does)',
  );
else {
  const ctx = {} as {
    workspace: Workspace;
    redis: RedisServer;
    accounts: Accounts;
    origins: RunningOrigin[];
    warnings: string[];
  };
  const now = Date.parse('2026-11-20T12:30:00Z');
  const HOUR_START = Date.parse('2026-11-20T12:00:00Z');
  const desc = (svg: string) =>
    new DOMParser().parseFromString(svg, 'image/svg+xml').getElementsByTagName('desc')[0]?.textContent;
  const chart = (origin: number, id: string, query: string, token?: string) =>
    fetch(
      `${ctx.origins[origin]!.url}/api/servers/${id}/chart/players${query}`,
      token ? { headers: { authorization: `Bearer ${token}` } } : {},
    );
  const ingest = (origin: number, id: string, key: string, body: unknown) =>
    fetch(`${ctx.origins[origin]!.url}/api/servers/${id}/stats`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });

  const shared = suite('shared state in Redis (REDIS_URL)');
  shared.before(async () => {
    ctx.workspace = await makeWorkspace();
    ctx.redis = await startRedis(REDIS);
    ctx.accounts = await makeAccounts(ctx.workspace, { REDIS_URL: ctx.redis.url });
    ctx.warnings = [];
    const options = { redisUrl: ctx.redis.url, now: () => now, logger: collectLog(ctx.warnings) };
    ctx.origins = [await startTestOrigin(ctx.workspace, options), await startTestOrigin(ctx.workspace, options)];
  });
  shared.after(async () => {
    for (const origin of ctx.origins ?? []) await origin.close();
    await ctx.redis.stop();
    await ctx.workspace.remove();
  });

  shared('servers and tokens the CLI made are known to every origin, not to the embedded store', async () => {
    const { privateServer, owner } = ctx.accounts;
    for (const origin of [0, 1]) assert.is((await chart(origin, privateServer.id, '', owner)).status, 200);
    const embedded = await runDepot(['stats', 'add', privateServer.id, '3'], ctx.workspace);
    assert.is(embedded.code, 1, 'without REDIS_URL the CLI looks in STORAGE_DIR, where the server is not');
    assert.match(embedded.stderr, /no server with id/);
  });

  shared('two origins ingesting for one server at once lose nothing', async () => {
    const { id, ingestKey } = ctx.accounts.publicServer;
    const at = new Date(HOUR_START + 60_000).toISOString();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => ingest(i % 2, id, ingestKey, { samples: [{ at, players: i + 1 }] })),
    );
    assert.equal(new Set(answers.map((a) => a.status)), new Set([204]));
    const state = createRedisStorage(ctx.redis.url, NO_LOG);
    try {
      assert.ok(await redisReady(state.redis!, 5000));
      const buckets = await sampleStore(state.storage, state.redis).range(id, HOUR_START, HOUR_START);
      assert.equal(buckets, [{ hour: HOUR_START, max: 200, sum: (200 * 201) / 2, count: 200 }]);
    } finally {
      await state.redis!.quit();
    }
  });

  shared("a sample ingested through one origin is in the other origin's chart", async () => {
    const { id, ingestKey } = ctx.accounts.privateServer;
    assert.is((await ingest(0, id, ingestKey, { players: 4242 })).status, 204);
    const response = await chart(1, id, '?days=2', ctx.accounts.owner);
    assert.is(response.status, 200);
    assert.match(desc(await response.text())!, /peak 4,?242 players/);
  });

  shared(
    'one Idempotency-Key sent to both origins at once is stored once; the others answer replayed or 409',
    async () => {
      const { id, ingestKey } = ctx.accounts.publicServer;
      const at = new Date(HOUR_START - 5 * 3_600_000).toISOString();
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          fetch(`${ctx.origins[i % 2]!.url}/api/servers/${id}/stats`, {
            method: 'POST',
            headers: { authorization: `Bearer ${ingestKey}`, 'idempotency-key': 'both-origins' },
            body: JSON.stringify({ samples: [{ at, players: 9 }] }),
          }),
        ),
      );
      const stored = answers.filter((a) => a.status === 204 && a.headers.get('idempotent-replayed') === null);
      assert.is(stored.length, 1);
      assert.ok(
        answers.every((a) => a.status === 204 || a.status === 409),
        answers.map((a) => a.status).join(),
      );
      const state = createRedisStorage(ctx.redis.url, NO_LOG);
      try {
        assert.ok(await redisReady(state.redis!, 5000));
        const hour = Date.parse(at);
        const buckets = await sampleStore(state.storage, state.redis).range(id, hour, hour);
        assert.equal(
          buckets.filter((bucket) => bucket.hour === hour),
          [{ hour, max: 9, sum: 9, count: 1 }],
        );
      } finally {
        await state.redis!.quit();
      }
    },
  );

  shared('every cache key lives under depot:cache: with a TTL; records keep their own prefixes', async () => {
    const { id } = ctx.accounts.publicServer;
    for (const width of [401, 402, 403]) assert.is((await chart(width % 2, id, `?width=${width}`)).status, 200);
    for (const size of [71, 72])
      assert.is((await fetch(`${ctx.origins[0]!.url}/api/image/brand/folia?size=${size}`)).status, 200);
    const state = createRedisStorage(ctx.redis.url, NO_LOG);
    try {
      assert.ok(await redisReady(state.redis!, 5000));
      const keys = await state.redis!.keys('depot:*');
      const caches = keys.filter((key) => key.startsWith('depot:cache:'));
      assert.ok(caches.filter((key) => key.startsWith('depot:cache:charts:')).length >= 3, keys.join('\n'));
      assert.ok(caches.filter((key) => key.startsWith('depot:cache:brand-images:')).length >= 2, keys.join('\n'));
      for (const key of caches) assert.ok((await state.redis!.ttl(key)) > 0, `${key} has a TTL`);
      const others = keys.filter((key) => !key.startsWith('depot:cache:'));
      assert.equal(
        others.filter((key) => !/^depot:((servers|user-tokens|samples|idempotency|rate):|audit$)/.test(key)),
        [],
      );
    } finally {
      await state.redis!.quit();
    }
  });

  shared(
    'Redis hanging (frozen, connections open): charts and ingestion answer 503 within the command timeout; thawed: served again',
    async () => {
      const { id, ingestKey } = ctx.accounts.publicServer;
      ctx.redis.freeze();
      try {
        const started = performance.now();
        const [charted, ingested] = [await chart(0, id, '?days=9'), await ingest(1, id, ingestKey, { players: 5 })];
        const ms = performance.now() - started;
        assert.is(charted.status, 503);
        assert.is(ingested.status, 503);
        assert.ok(ms < 5000, `both answered in ${Math.round(ms)} ms, not left hanging`);
        assert.is((await fetch(`${ctx.origins[0]!.url}/api/plugin-versions`)).status, 200);
      } finally {
        ctx.redis.thaw();
      }
      await until(
        async () => (await ingest(0, id, ingestKey, { players: 6 })).status === 204,
        'ingestion answers again once Redis is',
      );
      await until(async () => (await chart(1, id, '?days=10')).status === 200, 'charts too');
    },
  );

  shared(
    'Redis stopped: static and metadata answers and images still served; charts and ingestion 503 at once; Redis back: all recover without a restart',
    async () => {
      const { id, ingestKey } = ctx.accounts.publicServer;
      await ctx.redis.stop();
      for (const origin of ctx.origins) {
        assert.is((await fetch(`${origin.url}/api/plugin-versions`)).status, 200, 'precomputed');
        assert.is((await fetch(`${origin.url}/api/plugin-versions/latest/PaperMC`)).status, 200, 'live, from the tree');
        const image = await fetch(`${origin.url}/api/image/brand/folia?size=77`);
        assert.is(image.status, 200, 'a render the shared cache never saw: rendered, not cached');
        const started = performance.now();
        const refused = [
          await chart(ctx.origins.indexOf(origin), id, '?days=3'),
          await ingest(ctx.origins.indexOf(origin), id, ingestKey, { players: 1 }),
        ];
        assert.ok(performance.now() - started < 3000, 'answered at once, not after a hang');
        for (const answer of refused) {
          assert.is(answer.status, 503);
          assert.is(answer.headers.get('retry-after'), '5');
          assert.equal(await answer.json(), { error: 'Shared storage is unavailable; retry in a few seconds' });
        }
      }
      await until(
        () => ctx.warnings.some((line) => /\[redis\] redis:\/\/127\.0\.0\.1:\d+ unavailable/.test(line)),
        'the outage is logged',
      );
      assert.ok(
        ctx.warnings.some((line) => /\[cache\] brand-images: storage unavailable/.test(line)),
        ctx.warnings.join('\n'),
      );

      await ctx.redis.start(); // empty: this redis-server keeps nothing on disk
      await until(
        async () => (await ingest(0, id, ingestKey, { players: 1 })).status === 404,
        'origin 0 reaches Redis again (and finds it empty)',
      );
      await until(async () => (await chart(1, id, '')).status === 404, 'origin 1 too');
      const server = JSON.parse(
        (await runDepot(['server', 'add', '--owner', 'olivia'], ctx.workspace, { REDIS_URL: ctx.redis.url })).stdout,
      ) as { id: string; ingestKey: string };
      assert.is((await ingest(1, server.id, server.ingestKey, { players: 12 })).status, 204);
      assert.match(desc(await (await chart(0, server.id, '?days=1')).text())!, /peak 12 players/);
    },
  );
  shared.run();

  const migrate = suite('depot migrate: the embedded store into Redis');
  const m = {} as { workspace: Workspace; redis: RedisServer; accounts: Accounts };
  migrate.before(async () => {
    m.workspace = await makeWorkspace();
    m.redis = await startRedis(REDIS);
    m.accounts = await makeAccounts(m.workspace); // into STORAGE_DIR, the embedded store
  });
  migrate.after(async () => {
    await m.redis.stop();
    await m.workspace.remove();
  });
  migrate(
    'copies servers, tokens and samples, checked, never overwriting; the origins then read them from Redis',
    async () => {
      const { privateServer, owner } = m.accounts;
      const sampled = await runDepot(['stats', 'add', privateServer.id, '321'], m.workspace);
      assert.is(sampled.code, 0, sampled.stderr);
      await writeFile(join(m.workspace.storageDir, 'servers/not-a-record'), '{"id":"x"}');
      const hook = await runDepot(['webhook', 'add', 'http://127.0.0.1:9/hook'], m.workspace);
      assert.is(hook.code, 0, hook.stderr);
      const first = await runDepot(['migrate', '--to', m.redis.url], m.workspace);
      assert.is(first.code, 0, first.stderr);
      const report = JSON.parse(first.stdout) as {
        copied: Record<string, number>;
        unchanged: number;
        conflicts: string[];
        invalid: string[];
        audit: { copied: number; unchanged: number; left: number };
      };
      assert.equal(report.copied, {
        servers: 2,
        tokens: 2,
        publishingTokens: 0,
        samples: 1,
        webhooks: 1,
        deliveries: 0,
      });
      assert.equal(report.invalid, ['servers:not-a-record']);
      assert.equal(
        report.audit,
        { copied: 5, unchanged: 0, left: 0 },
        'the audit log: two users, two servers, a webhook',
      );
      const again = JSON.parse(
        (await runDepot(['migrate'], m.workspace, { REDIS_URL: m.redis.url })).stdout,
      ) as typeof report;
      assert.equal(
        again.copied,
        { servers: 0, tokens: 0, publishingTokens: 0, samples: 0, webhooks: 0, deliveries: 0 },
        'a second run copies nothing',
      );
      assert.is(again.unchanged, 6);
      assert.equal(again.audit, { copied: 0, unchanged: 5, left: 0 });
      const listed = await runDepot(['webhook', 'list'], m.workspace, { REDIS_URL: m.redis.url });
      assert.equal(
        (JSON.parse(listed.stdout) as { webhooks: { url: string }[] }).webhooks.map((w) => w.url),
        ['http://127.0.0.1:9/hook'],
        'the webhook, secret and all, is in Redis',
      );

      const origin = await startTestOrigin(m.workspace, { redisUrl: m.redis.url, logger: NO_LOG });
      try {
        const response = await fetch(`${origin.url}/api/servers/${privateServer.id}/chart/players?days=1`, {
          headers: { authorization: `Bearer ${owner}` },
        });
        assert.is(response.status, 200, "the owner's token and the private server came over");
        assert.match(desc(await response.text())!, /peak 321 players/);
      } finally {
        await origin.close();
      }
      const refused = await runDepot(['migrate'], m.workspace);
      assert.is(refused.code, 1);
      assert.match(refused.stderr, /--to: missing/);
    },
  );
  migrate.run();
}
