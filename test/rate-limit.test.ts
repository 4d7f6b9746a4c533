import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseRateLimit } from '../server/http/rate-limit-policy.ts';
import { createRateLimiter, type RateLimitState, type RateLimitWindow } from '../server/http/rate-limit.ts';
import type { OriginOptions, RunningOrigin } from '../server/origin.ts';
import { createFileStorage, createRedisStorage } from '../server/storage.ts';
import { redisReady } from '../server/redis.ts';
import {
  findProgram,
  makeWorkspace,
  runDepot,
  startRedis,
  startTestOrigin,
  until,
  type RedisServer,
  type Workspace,
} from './helpers.ts';
import { collectLog } from './collect-log.ts';
import { NO_LOG } from '../server/helpers/log.ts';

const parsing = suite('parseRateLimit');
const policies: [string, unknown][] = [
  ['100/15m', { limit: 100, windowSeconds: 900 }],
  ['5/1s', { limit: 5, windowSeconds: 1 }],
  ['1000/1h', { limit: 1000, windowSeconds: 3600 }],
  ['0', null],
  ['100', undefined],
  ['0/15m', undefined],
  ['ten/15m', undefined],
];
for (const [text, expected] of policies) parsing(`${text}`, () => assert.equal(parseRateLimit(text), expected));
parsing.run();

const counting = suite('the in-process counter');
counting(
  'counts per client in the window a request arrived in, even when it is charged after that window ended',
  () => {
    let time = Date.parse('2026-11-22T10:00:00Z'); // a window boundary (900 s divides it)
    const limiter = createRateLimiter({ limit: 2, windowSeconds: 900 }, () => time);
    const take = (window: RateLimitWindow) => limiter.take(window) as RateLimitState | null;
    const first = limiter.windowOf('a');
    assert.equal(take(first), { allowed: true, remaining: 1, resetSeconds: 900, policy: limiter.policy });
    assert.is(take(limiter.windowOf('b'))?.remaining, 1, 'another client has its own count');
    time += 899_500;
    const late = limiter.windowOf('a');
    assert.is(late.resetSeconds, 1);
    time += 1_000; // the next window: `late` is charged after its window ended, and still counts there
    assert.equal(take(late), { allowed: true, remaining: 0, resetSeconds: 1, policy: limiter.policy });
    assert.is(take(late)?.allowed, false);
    assert.is(take(limiter.windowOf('a'))?.remaining, 1, 'the new window starts from nothing');
    time += 2 * 900_000;
    assert.is(take(limiter.windowOf('a'))?.remaining, 1, 'two windows on, again from nothing');
    assert.is(take(first)?.allowed, true, 'the counts of windows long over are dropped');
  },
);
counting.run();

const ctx = {} as { workspace: Workspace; origin: RunningOrigin; now: number };
const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  fetch(ctx.origin.url + path, { headers, method });
async function start(options: Partial<OriginOptions> = {}) {
  ctx.now = Date.parse('2026-11-22T10:00:00Z');
  ctx.origin = await startTestOrigin(ctx.workspace, {
    storage: createFileStorage(ctx.workspace.storageDir),
    rateLimit: { limit: 100, windowSeconds: 900 },
    now: () => ctx.now,
    ...options,
  });
}
async function spend(path: string, count: number, headers: Record<string, string> = {}) {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await get(path, headers);
    await response.arrayBuffer();
    statuses.push(response.status);
  }
  return statuses;
}

const limit = suite('rate limit (SPEC 8)');
limit.before(async () => {
  ctx.workspace = await makeWorkspace();
});
limit.after(() => ctx.workspace.remove());
limit.after.each(() => ctx.origin.close());

limit(
  'the 100th request passes, the 101st gets 429 with Retry-After and the RateLimit fields; a new window lets requests through',
  async () => {
    await start();
    const first = await get('/api/plugin-versions/latest/papermc');
    assert.is(first.headers.get('ratelimit-policy'), '"default";q=100;w=900');
    assert.is(first.headers.get('ratelimit'), '"default";r=99;t=900');
    assert.is(first.headers.get('x-ratelimit-limit'), '100');
    assert.is(first.headers.get('x-ratelimit-remaining'), '99');
    assert.match(first.headers.get('access-control-expose-headers')!, /RateLimit-Policy, RateLimit, X-RateLimit-Limit/);
    assert.equal(new Set(await spend('/api/plugin-versions', 99)), new Set([200]));
    ctx.now += 60_000;
    const over = await get('/api/plugin-versions/download/latest/velocity');
    assert.is(over.status, 429);
    assert.is(over.headers.get('retry-after'), '840');
    assert.is(over.headers.get('x-ratelimit-remaining'), '0');
    assert.is(
      ((await over.json()) as { error: string }).error,
      'Rate limit of 100 requests per 900 seconds exceeded; retry in 840 seconds',
    );
    assert.is(
      (await get('/api/image/brand/papermc?size=333&format=webp')).status,
      429,
      'an image that would need rendering',
    );
    assert.is((await get('/api/charts/example?days=3')).status, 429);
    ctx.now += 840_000;
    const next = await get('/api/plugin-versions');
    assert.is(next.status, 200);
    assert.is(next.headers.get('x-ratelimit-remaining'), '99');
  },
);

limit('precomputed and cached brand images do not count, and are served over the limit', async () => {
  await start();
  assert.equal(new Set(await spend('/brand/papermc/none/64.png', 60)), new Set([200]));
  assert.equal(new Set(await spend('/api/image/brand/papermc?size=64&format=webp', 60)), new Set([200]));
  assert.is((await get('/api/image/brand/folia?size=77')).status, 200); // rendered: counts
  assert.equal(new Set(await spend('/api/image/brand/folia?size=77', 60)), new Set([200])); // cached: does not
  assert.equal(new Set(await spend('/api/plugin-versions', 99)), new Set([200]));
  assert.is((await get('/api/plugin-versions')).status, 429);
  assert.is((await get('/brand/velocity/white/128.webp')).status, 200);
  assert.is((await get('/api/image/brand/folia?size=77')).status, 200);
});

limit("an owner's private chart is not limited; a public chart is", async () => {
  const owner = JSON.parse((await runDepot(['user', 'add', 'rita'], ctx.workspace)).stdout) as { token: string };
  const secret = JSON.parse(
    (await runDepot(['server', 'add', '--owner', 'rita', '--private'], ctx.workspace)).stdout,
  ) as { id: string };
  const open = JSON.parse((await runDepot(['server', 'add', '--owner', 'rita'], ctx.workspace)).stdout) as {
    id: string;
  };
  await start();
  const auth = { authorization: `Bearer ${owner.token}` };
  assert.equal(new Set(await spend(`/api/servers/${secret.id}/chart/players`, 120, auth)), new Set([200]));
  assert.equal(new Set(await spend(`/api/servers/${open.id}/chart/players`, 100)), new Set([200]));
  assert.is((await get(`/api/servers/${open.id}/chart/players`)).status, 429);
  assert.is((await get(`/api/servers/${secret.id}/chart/players`, auth)).status, 200);
});

limit('a forged X-Forwarded-For gains nothing from an untrusted peer, and is honoured from a trusted one', async () => {
  await start();
  const forged = Array.from({ length: 101 }, (_, i) => ({ 'x-forwarded-for': `198.51.100.${i}` }));
  const statuses = [];
  for (const headers of forged) statuses.push((await get('/api/plugin-versions', headers)).status);
  assert.is(statuses.at(-1), 429);
  await ctx.origin.close();
  await start({ trustProxy: ['127.0.0.1'] });
  const trusted = [];
  for (const headers of forged) trusted.push((await get('/api/plugin-versions', headers)).status);
  assert.equal(new Set(trusted), new Set([200]));
});
limit(
  'behind a trusted proxy, an X-Forwarded-For entry that is not an address is a client of its own, never the proxy',
  async () => {
    await start({ trustProxy: ['127.0.0.1', '::1'], rateLimit: { limit: 5, windowSeconds: 900 } });
    const from = (entry: string) => ({ 'x-forwarded-for': `203.0.113.9, ${entry}` });
    const remaining = async (headers: Record<string, string>) => {
      const response = await get('/api/plugin-versions', headers);
      await response.arrayBuffer();
      return response.status === 429 ? 'refused' : response.headers.get('x-ratelimit-remaining');
    };
    // Each kind of garbage spends its own budget...
    for (const entry of ['garbage', '012.1.2.3', '0x7f.0.0.1', '127.1', '2130706433', 'fe80::1%eth0']) {
      assert.equal(new Set(await spend('/api/plugin-versions', 5, from(entry))), new Set([200]), entry);
      assert.is(await remaining(from(entry)), 'refused', entry);
    }
    // ...and none of the proxy's, nor of the clients it forwards with real addresses.
    assert.is(await remaining({}), '4', 'the proxy itself');
    assert.is(await remaining(from('198.51.100.20')), '4', 'a client with an address');
    // A port is not part of the client: 1.2.3.4:5678, 1.2.3.4:80 and 1.2.3.4 share one budget, as do [::1]:80 and ::1.
    assert.is(await remaining(from('198.51.100.30:5678')), '4');
    assert.is(await remaining(from('198.51.100.30:80')), '3');
    assert.is(await remaining(from('198.51.100.30')), '2');
    assert.is(await remaining(from('[2001:db8::7]:443')), '4');
    assert.is(await remaining(from('2001:db8::7')), '3');
  },
);

limit('a refund goes to the window the request was charged in, not to the next one', async () => {
  const windowMs = 900_000;
  const boundary = Math.ceil(Date.parse('2026-11-22T10:00:00Z') / windowMs) * windowMs + windowMs;
  let time = boundary - 1000;
  let jumpTo: number | undefined;
  // The first reading (the charge) is one second before the boundary, every later one (the refund) one second after.
  await start({
    rateLimit: { limit: 5, windowSeconds: 900 },
    now: () => {
      const reading = time;
      if (jumpTo !== undefined) [time, jumpTo] = [jumpTo, undefined];
      return reading;
    },
  });
  jumpTo = boundary + 1000;
  const image = await get('/brand/papermc/none/64.png'); // precomputed: does not count, so it is handed back
  await image.arrayBuffer();
  assert.is(image.status, 200);
  assert.is(time, boundary + 1000, 'the request straddled the boundary');
  // The next window has its five requests, not six.
  assert.equal(await spend('/api/plugin-versions', 6), [200, 200, 200, 200, 200, 429]);
});

limit(
  'an image or chart request answered with an error counts, and keeps its status over the limit; a precomputed image carries no count',
  async () => {
    await start({ rateLimit: { limit: 3, windowSeconds: 900 } });
    const badSize = await get('/api/image/brand/papermc?size=0');
    assert.is(badSize.status, 400);
    assert.is(badSize.headers.get('x-ratelimit-remaining'), '2');
    assert.is((await get('/api/image/brand/nosuchbrand')).headers.get('x-ratelimit-remaining'), '1');
    const precomputed = await get('/brand/papermc/none/64.png');
    assert.is(precomputed.status, 200);
    assert.is(precomputed.headers.get('x-ratelimit-remaining'), null, 'not charged, so no count to show');
    assert.is((await get('/api/charts/example')).headers.get('x-ratelimit-remaining'), '0');
    const over = await get('/api/image/brand/papermc?size=0');
    assert.is(over.status, 400, 'the error, not a 429');
    assert.is(over.headers.get('x-ratelimit-remaining'), '0');
    assert.is((await get('/api/image/brand/papermc?size=333')).status, 429);
  },
);

limit('HEAD counts like GET', async () => {
  await start();
  const heads = [];
  for (let i = 0; i < 100; i++) heads.push((await get('/api/plugin-versions/latest/velocity', {}, 'HEAD')).status);
  assert.equal(new Set(heads), new Set([200]));
  assert.is((await get('/api/plugin-versions')).status, 429);
});

limit('IPv6 clients count per /64; IPv4-mapped ones as their IPv4 address, never as one IPv6 group', async () => {
  await start({ trustProxy: ['127.0.0.1'] });
  const from = (address: string) => ({ 'x-forwarded-for': address });
  const subscriber = ['2001:db8:1:2::1', '2001:db8:1:2:aaaa::7', '2001:db8:1:2:ffff:ffff:ffff:ffff'];
  for (let i = 0; i < 100; i++) assert.is((await get('/api/plugin-versions', from(subscriber[i % 3]!))).status, 200);
  assert.is((await get('/api/plugin-versions', from('2001:db8:1:2:1234::1'))).status, 429, 'same /64');
  assert.is((await get('/api/plugin-versions', from('2001:db8:1:3::1'))).status, 200, 'next /64');
  assert.equal(new Set(await spend('/api/plugin-versions', 100, from('::ffff:198.51.100.7'))), new Set([200]));
  assert.is((await get('/api/plugin-versions', from('198.51.100.7'))).status, 429, 'mapped = plain IPv4');
  assert.is((await get('/api/plugin-versions', from('198.51.100.8'))).status, 200, 'another IPv4 client');
  assert.is((await get('/api/plugin-versions', from('::ffff:198.51.100.9'))).status, 200, 'another mapped client');
});

limit('a client on IPv6 loopback is counted by its socket address', async () => {
  await start({ host: '::1' });
  assert.match(ctx.origin.url, /^http:\/\/\[::1\]:/);
  assert.equal(new Set(await spend('/api/plugin-versions', 100)), new Set([200]));
  assert.is((await get('/api/plugin-versions')).status, 429);
});
limit.run();

// Shared state: two origins, one Redis (Debian's redis-server, which .ci/run installs).
const REDIS = findProgram('redis-server');
if (!REDIS)
  console.warn(
    'rate-limit.test.ts: redis-server not installed, Redis tests not run (apt-get install -y redis-server; .ci/run does)',
  );
else {
  const shared = suite('rate limit in Redis (REDIS_URL)');
  const redis = {} as { server: RedisServer; warnings: string[]; other: RunningOrigin };
  shared.before(async () => {
    ctx.workspace = await makeWorkspace();
    redis.server = await startRedis(REDIS);
  });
  shared.after(async () => {
    await redis.server.stop();
    await ctx.workspace.remove();
  });
  shared.after.each(async () => {
    await ctx.origin.close();
    await redis.other?.close();
  });
  const startPair = async () => {
    redis.warnings = [];
    await start({ redisUrl: redis.server.url, logger: collectLog(redis.warnings) });
    redis.other = await startTestOrigin(ctx.workspace, {
      rateLimit: { limit: 100, windowSeconds: 900 },
      now: () => ctx.now,
      redisUrl: redis.server.url,
      logger: NO_LOG,
    });
  };
  const getOther = (path: string) => fetch(redis.other.url + path);

  shared(
    "the origin's own stall past the command deadline is no Redis outage; a Redis that hangs still is",
    async () => {
      const { redis: client } = createRedisStorage(redis.server.url, NO_LOG);
      try {
        assert.ok(await redisReady(client!, 5_000), 'connected');
        const answered = client!.ping();
        // The event loop busy for 1.5 s (a burst of work on a loaded machine) while Redis answers at once.
        const stalledUntil = performance.now() + 1_500;
        while (performance.now() < stalledUntil);
        assert.is(await answered, 'PONG');
        redis.server.freeze();
        try {
          const started = performance.now();
          const failed = await client!.ping().then(
            () => null,
            (error: Error) => error.message,
          );
          assert.is(failed, 'Command timed out');
          assert.ok(performance.now() - started < 2_500, `failed after ${Math.round(performance.now() - started)} ms`);
        } finally {
          redis.server.thaw();
        }
      } finally {
        client!.disconnect();
      }
    },
  );

  shared('two origins count against one limit: the 101st request over both gets 429', async () => {
    await startPair();
    ctx.now = Date.parse('2026-11-22T11:00:00Z'); // a window no other test used
    assert.equal(new Set(await spend('/api/plugin-versions', 60)), new Set([200]));
    let last: Response | undefined;
    for (let i = 0; i < 40; i++) {
      last = await getOther('/api/plugin-versions/latest/papermc');
      assert.is(last.status, 200);
    }
    assert.is(last!.headers.get('x-ratelimit-remaining'), '0');
    const over = await get('/api/plugin-versions');
    assert.is(over.status, 429);
    assert.is(over.headers.get('retry-after'), '900');
    assert.is((await getOther('/api/plugin-versions')).status, 429);
    ctx.now += 900_000;
    assert.is((await getOther('/api/plugin-versions')).status, 200);
    assert.is((await get('/api/plugin-versions')).headers.get('x-ratelimit-remaining'), '98');
  });

  shared(
    'Redis down: requests are served, unlimited, with a warning; Redis back: counting resumes without a restart',
    async () => {
      await startPair();
      ctx.now = Date.parse('2026-11-22T12:00:00Z');
      assert.is((await get('/api/plugin-versions')).headers.get('x-ratelimit-remaining'), '99');
      await redis.server.stop();
      const during = await get('/api/plugin-versions');
      assert.is(during.status, 200);
      assert.is(during.headers.get('x-ratelimit-remaining'), null);
      assert.ok(
        redis.warnings.some((line) => /\[rate-limit\] store unavailable, requests are not limited/.test(line)),
        redis.warnings.join('\n'),
      );
      await until(
        () => redis.warnings.some((line) => /\[redis\] redis:\/\/127\.0\.0\.1:\d+ unavailable/.test(line)),
        'the Redis outage is logged',
      );
      await redis.server.start();
      let remaining: string | null = null;
      await until(
        async () => (remaining = (await get('/api/plugin-versions')).headers.get('x-ratelimit-remaining')) !== null,
        'counting resumes',
      );
      assert.is(remaining, '99', 'counting resumed in the restarted (empty) Redis');
      assert.ok(redis.warnings.some((line) => /\[redis\] .* back/.test(line)));
    },
  );
  shared(
    'Redis frozen: one request waits for the command timeout, the next are served unlimited at once; thawed: counting resumes',
    async () => {
      await startPair();
      ctx.now = Date.parse('2026-11-22T13:00:00Z');
      assert.is((await get('/api/plugin-versions')).headers.get('x-ratelimit-remaining'), '99');
      redis.server.freeze();
      try {
        const first = performance.now();
        assert.is((await get('/api/plugin-versions')).status, 200);
        assert.ok(performance.now() - first < 2500, 'the first waits at most about the 1 s command timeout');
        const rest = performance.now();
        for (let i = 0; i < 5; i++) {
          const answer = await get('/api/plugin-versions');
          assert.is(answer.status, 200);
          assert.is(answer.headers.get('x-ratelimit-remaining'), null, 'unlimited while the store rests');
        }
        assert.ok(
          performance.now() - rest < 1000,
          `the next five took ${Math.round(performance.now() - rest)} ms: the store is not asked`,
        );
      } finally {
        redis.server.thaw();
      }
      let remaining: string | null = null;
      await until(
        async () => (remaining = (await get('/api/plugin-versions')).headers.get('x-ratelimit-remaining')) !== null,
        'counting resumes',
      );
      assert.ok(Number(remaining) < 99, `the count kept in Redis goes on (${remaining} left)`);
    },
  );
  shared.run();
}
