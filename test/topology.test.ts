import { mkdtemp, readFile, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { DownloadCounts } from '../server/downloads/counts.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { contractSuite } from './contract.ts';
import {
  findProgram,
  freePort,
  makeAccounts,
  makeWorkspace,
  rawRequest,
  runBuildCommand,
  spawnOrigin,
  startNginx,
  startRedis,
  runDepot,
  until,
  type Accounts,
  type NginxServer,
  type OriginProcess,
  type RedisServer,
  type Workspace,
} from './helpers.ts';

// The deployment at scale, on loopback: Debian's nginx with the build's nginx.conf in front of two
// origin processes that share one redis-server. .ci/run installs nginx and redis-server.
const NGINX = findProgram('nginx');
const REDIS = findProgram('redis-server');
if (!NGINX || !REDIS)
  console.warn(
    'topology.test.ts: nginx or redis-server not installed, topology tests not run (apt-get install -y nginx redis-server; .ci/run does)',
  );
else {
  const ctx = {} as {
    workspace: Workspace;
    redisDir: string;
    redis: RedisServer;
    ports: number[];
    env: Record<string, string>;
    origins: OriginProcess[];
    nginx: NginxServer;
    accounts: Accounts;
  };
  const startOrigins = async () => {
    ctx.origins = [
      await spawnOrigin(ctx.workspace, { ...ctx.env, PORT: String(ctx.ports[0]) }),
      await spawnOrigin(ctx.workspace, { ...ctx.env, PORT: String(ctx.ports[1]) }),
    ];
  };
  const stopOrigins = async () => {
    for (const origin of ctx.origins) {
      if (origin.child.exitCode === null) origin.child.kill('SIGTERM');
      await origin.exited;
    }
  };
  // Generous while the contract runs; the rate-limit suite rebuilds with SPEC 8's 100 per 15 minutes.
  const topologyEnv = (rateLimit: string) => ({
    REDIS_URL: ctx.redis.url,
    TRUST_PROXY: '127.0.0.1',
    RATE_LIMIT: rateLimit,
    NGINX_ORIGINS: `127.0.0.1:${ctx.ports[0]},127.0.0.1:${ctx.ports[1]}`,
    NGINX_LISTEN: `127.0.0.1:${ctx.ports[2]}`,
    NGINX_REAL_IP_FROM: '127.0.0.1',
  });
  const build = async () => {
    const result = await runBuildCommand(ctx.workspace, ctx.env);
    assert.is(result.code, 0, result.stderr);
  };
  const nginxGet = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    rawRequest(ctx.nginx.url + path, { method, headers });
  const ingest = (id: string, key: string, players: number, client = '192.0.2.1') =>
    fetch(`${ctx.nginx.url}/api/servers/${id}/stats`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-forwarded-for': client },
      body: JSON.stringify({ players }),
    });
  /** GET requests an origin logged for `path`. */
  const requestLines = (origin: OriginProcess, path: string) =>
    origin.stdout.filter((line) => line.includes(`"method":"GET","path":"${path}"`)).length;

  contractSuite('nginx in front of two origins sharing Redis', {
    start: async () => {
      ctx.workspace = await makeWorkspace({ build: false });
      ctx.redisDir = await mkdtemp(join(tmpdir(), 'depot-redis-'));
      ctx.redis = await startRedis(REDIS, { keepIn: ctx.redisDir });
      ctx.ports = [await freePort(), await freePort(), await freePort()];
      ctx.env = topologyEnv('100000/15m');
      await build();
      ctx.accounts = await makeAccounts(ctx.workspace, ctx.env);
      await startOrigins();
      ctx.nginx = await startNginx(NGINX, join(ctx.workspace.distDir, 'current/nginx.conf'), ctx.ports[2]!, {
        accessLog: join(ctx.workspace.dir, 'nginx-access.log'),
      });
      return { url: ctx.nginx.url, treeDir: (await currentTreeDir(ctx.workspace.distDir))! };
    },
  });

  const topology = suite('topology: nginx, two origins, Redis');
  topology.after(async () => {
    await ctx.nginx?.stop();
    await stopOrigins();
    await ctx.redis?.stop();
    await ctx.workspace?.remove();
    await rm(ctx.redisDir, { recursive: true, force: true });
  });

  topology('nginx answers precomputed routes itself and spreads the rest over both origins', async () => {
    for (let i = 0; i < 20; i++) assert.is((await nginxGet('/api/plugin-versions/latest/purpur/17')).status, 200);
    for (let i = 0; i < 20; i++) assert.is((await nginxGet('/api/plugin-versions/latest/Purpur/17')).status, 200);
    await until(
      () => ctx.origins.every((origin) => requestLines(origin, '/api/plugin-versions/latest/Purpur/17') >= 5),
      'both origins answered live requests',
    );
    assert.equal(
      ctx.origins.map((origin) => requestLines(origin, '/api/plugin-versions/latest/purpur/17')),
      [0, 0],
      'no precomputed answer reached an origin',
    );
  });

  topology(
    "servers, tokens and samples are shared: a sample ingested through one origin is in the other's chart",
    async () => {
      const { privateServer, owner } = ctx.accounts;
      for (let i = 0; i < 4; i++)
        assert.is((await ingest(privateServer.id, privateServer.ingestKey, 100 + i)).status, 204);
      for (let i = 0; i < 2; i++) {
        // days differ, so neither answer comes from the shared chart cache; each origin renders one.
        const chart = await nginxGet(`/api/servers/${privateServer.id}/chart/players?days=${i + 1}`, {
          authorization: `Bearer ${owner}`,
        });
        assert.is(chart.status, 200);
        assert.is(chart.headers['cache-control'], 'private, max-age=300');
        assert.match(chart.body.toString(), /peak 103 players/);
      }
      assert.is((await nginxGet(`/api/servers/${privateServer.id}/chart/players`)).status, 403);
    },
  );

  topology(
    'downloads count over both paths: the origins count what they answer, `counts import` what nginx served, each client once',
    async () => {
      const { catalog } = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
      const [first] = catalog.versions;
      const origin = `http://127.0.0.1:${ctx.ports[0]}`;
      const downloads = async () =>
        (await (await fetch(`${origin}/api/plugin-versions/downloads`)).json()) as DownloadCounts;
      // What the contract's downloads queued is stored within a second: wait until the counts stand still.
      let before = await downloads();
      for (let i = 0; i < 20; i++) {
        await new Promise((r) => setTimeout(r, 1200));
        const now = await downloads();
        if (now.total === before.total) break;
        before = now;
      }
      const firstBefore = before.versions.find((v) => v.id === first!.id)!.total;
      // Only this test's requests in the log nginx appends to.
      const log = join(ctx.workspace.dir, 'nginx-access.log');
      await truncate(log, 0);
      const direct = `/api/plugin-versions/download/${first!.id}`;
      // From files: nginx answers these itself (NGINX_REAL_IP_FROM: the forwarded address is the client's).
      for (const client of ['198.51.100.7', '198.51.100.7', '2001:db8:1:2::5', '2001:db8:1:2::6'])
        assert.is((await nginxGet(direct, { 'x-forwarded-for': client })).status, 200);
      assert.is((await nginxGet(direct, { 'x-forwarded-for': '198.51.100.8', range: 'bytes=0-9' })).status, 206);
      // Live (the software's name in another case): an origin answers and counts it.
      const live = await nginxGet('/api/plugin-versions/download/latest/PaperMC/21', {
        'x-forwarded-for': '198.51.100.9',
      });
      assert.is(live.status, 200);
      const paper = /plugin-[^/]+$/.exec(live.headers['content-location'] as string)![0];
      await until(async () => (await downloads()).total >= before.total + 1, 'the origin counted the live download');
      assert.is((await downloads()).total, before.total + 1, 'only the live download reached an origin');
      assert.equal(
        requestLines(ctx.origins[0]!, direct) + requestLines(ctx.origins[1]!, direct),
        0,
        'nginx served the files',
      );

      await until(async () => (await readFile(log, 'utf8')).includes('198.51.100.9'), 'nginx logged the downloads');
      const imported = await runDepot(['counts', 'import', log], ctx.workspace, ctx.env);
      assert.is(imported.code, 0, imported.stderr);
      // 198.51.100.7 twice and the two addresses of one /64 count once each; 198.51.100.9 the origin had counted.
      assert.equal(
        [JSON.parse(imported.stdout).counted, JSON.parse(imported.stdout).unattributed],
        [3, 0],
        imported.stdout,
      );
      const answer = await downloads();
      assert.is(answer.total, before.total + 4);
      assert.is(answer.versions.find((v) => v.id === first!.id)!.total, firstBefore + (first!.id === paper ? 4 : 3));
      const again = await runDepot(['counts', 'import', log], ctx.workspace, ctx.env);
      assert.is(JSON.parse(again.stdout).counted, 0, 'importing the same log again adds nothing');
    },
  );

  topology('one origin killed: static answers never fail, dynamic ones go to the other origin', async () => {
    const { publicServer } = ctx.accounts;
    ctx.origins[1]!.child.kill('SIGKILL');
    await ctx.origins[1]!.exited;
    const statuses = new Map<string, number[]>();
    for (let i = 0; i < 10; i++) {
      for (const [what, answer] of [
        ['static', nginxGet('/api/plugin-versions')],
        ['static jar', nginxGet('/api/plugin-versions/download/latest/velocity')],
        ['live', nginxGet('/api/plugin-versions/latest/Velocity')],
        ['chart', nginxGet(`/api/servers/${publicServer.id}/chart/players?days=${i + 1}`)],
        ['ingest', ingest(publicServer.id, publicServer.ingestKey, i).then((r) => ({ status: r.status }))],
      ] as const) {
        statuses.set(what, [...(statuses.get(what) ?? []), (await answer).status]);
      }
    }
    assert.equal(Object.fromEntries([...statuses].map(([what, list]) => [what, [...new Set(list)]])), {
      static: [200],
      'static jar': [200],
      live: [200],
      chart: [200],
      ingest: [204],
    });
    ctx.origins[1] = await spawnOrigin(ctx.workspace, { ...ctx.env, PORT: String(ctx.ports[1]) });
    // nginx tries a failed origin again after fail_timeout (10 s).
    await until(
      async () => {
        await nginxGet('/api/plugin-versions/latest/Purpur/17');
        return requestLines(ctx.origins[1]!, '/api/plugin-versions/latest/Purpur/17') > 0;
      },
      'nginx sends requests to the restarted origin',
      20_000,
    );
  });

  topology(
    'Redis stopped: files and metadata served, the limit fails open with a warning, charts and ingestion 503; Redis back: all recover without restarts',
    async () => {
      const { publicServer } = ctx.accounts;
      await ctx.redis.stop();
      for (let i = 0; i < 4; i++) {
        assert.is((await nginxGet('/api/plugin-versions')).status, 200);
        assert.is((await nginxGet('/api/plugin-versions/latest/Folia')).status, 200, 'live metadata, from the tree');
        assert.is(
          (await nginxGet(`/api/image/brand/leafmc?size=${90 + i}&format=png`)).status,
          200,
          'an image rendered without the shared cache',
        );
        const started = performance.now();
        const chart = await nginxGet(`/api/servers/${publicServer.id}/chart/players?days=${20 + i}`);
        const ingested = await ingest(publicServer.id, publicServer.ingestKey, 1);
        assert.ok(performance.now() - started < 4000, 'refused promptly, not after a hang');
        assert.is(chart.status, 503);
        assert.match(JSON.parse(chart.body.toString()).error, /^Shared storage is unavailable/);
        assert.is(chart.headers['retry-after'], '5');
        assert.is(ingested.status, 503);
      }
      await until(
        () =>
          ctx.origins.every((origin) =>
            origin.stdout.some((line) => line.includes('[rate-limit] store unavailable, requests are not limited')),
          ),
        'both origins warn that the limit fails open',
      );
      await ctx.redis.start();
      await until(
        async () => (await ingest(publicServer.id, publicServer.ingestKey, 77)).status === 204,
        'ingestion recovers',
      );
      let charts: number[] = [];
      await until(async () => {
        charts = await Promise.all(
          [0, 1].map(
            async (i) => (await nginxGet(`/api/servers/${publicServer.id}/chart/players?days=${40 + i}`)).status,
          ),
        );
        return charts.every((status) => status === 200);
      }, 'charts recover on both origins');
    },
  );

  topology(
    'SPEC 8 at scale: the 101st request over both origins gets 429; nginx limits the static API routes',
    async () => {
      // A release of the configuration: rebuild, reload nginx, restart the origins, as README's flow.
      ctx.env = topologyEnv('100/15m');
      await build();
      await ctx.nginx.reload();
      await stopOrigins();
      await startOrigins();
      // An origin waits at most 3 s for Redis before it listens, and until connected its limit fails
      // open (no RateLimit headers): on a loaded machine, count from when both origins count, asked
      // directly from another client so the count below starts at 100.
      await until(async () => {
        const answers = await Promise.all(
          ctx.ports.slice(0, 2).map((port) =>
            rawRequest(`http://127.0.0.1:${port}/api/plugin-versions/latest/PaperMC`, {
              headers: { 'x-forwarded-for': '198.51.100.200' },
            }),
          ),
        );
        return answers.every((answer) => answer.headers['x-ratelimit-remaining'] !== undefined);
      }, 'both origins count in Redis');
      const dynamic = { 'x-forwarded-for': '198.51.100.1' };
      for (let i = 0; i < 100; i++) {
        const answer = await nginxGet(
          i % 2 ? '/api/plugin-versions/latest/PaperMC' : '/api/plugin-versions/latest/Velocity',
          dynamic,
        );
        assert.is(answer.status, 200, `request ${i + 1}`);
        assert.is(
          answer.headers['x-ratelimit-remaining'],
          String(99 - i),
          `request ${i + 1}: one count over both origins`,
        );
      }
      const over = await nginxGet('/api/plugin-versions/latest/PaperMC', dynamic);
      assert.is(over.status, 429);
      assert.match(JSON.parse(over.body.toString()).error, /^Rate limit of 100 requests per 900 seconds exceeded/);
      const counted = (origin: OriginProcess) =>
        requestLines(origin, '/api/plugin-versions/latest/PaperMC') +
        requestLines(origin, '/api/plugin-versions/latest/Velocity');
      await until(() => ctx.origins.every((origin) => counted(origin) >= 30), 'both origins counted');

      const other = { 'x-forwarded-for': '198.51.100.2' };
      assert.is(
        (await nginxGet('/api/plugin-versions/latest/PaperMC', other)).status,
        200,
        'another client has its own limit',
      );
      const statuses: number[] = [];
      for (let i = 0; i < 101; i++) statuses.push((await nginxGet('/api/plugin-versions', other)).status);
      assert.equal(new Set(statuses.slice(0, 100)), new Set([200]));
      const limited = await nginxGet('/api/plugin-versions', other);
      assert.is(limited.status, 429, 'nginx refuses the static route past its burst');
      assert.match(JSON.parse(limited.body.toString()).error, /^Rate limit of 100 requests per 900 seconds exceeded/);
      assert.ok(Number(limited.headers['retry-after']) > 0);
      assert.is(
        (await nginxGet('/brand/papermc/light/64.png', other)).status,
        200,
        'precomputed brand images do not count',
      );

      // IPv6 clients count by their /64 at nginx, as at the origin.
      const v6 = (address: string) => ({ 'x-forwarded-for': address });
      for (let i = 0; i < 100; i++)
        assert.is((await nginxGet('/api/plugin-versions', v6(`2001:db8:5:6::${(i % 2) + 1}`))).status, 200);
      assert.is(
        (await nginxGet('/api/plugin-versions', v6('2001:db8:5:6::abcd'))).status,
        429,
        'the same /64 shares one budget',
      );
      assert.is(
        (await nginxGet('/api/plugin-versions', v6('2001:db8:5:7::1'))).status,
        200,
        'the next /64 has its own',
      );
    },
  );
  topology.run();
}
