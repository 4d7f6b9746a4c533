import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseRateLimit } from '../server/http/rate-limit.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { createFileStorage } from '../server/storage.ts';
import { makeWorkspace, runDepot, startTestOrigin, type Workspace } from './helpers.ts';

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

const ctx = {} as { workspace: Workspace; origin: RunningOrigin; now: number };
const get = (path: string, headers: Record<string, string> = {}) => fetch(ctx.origin.url + path, { headers });
async function start(options: { trustProxy?: string[] } = {}) {
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

limit('the 100th request passes, the 101st gets 429 with Retry-After and the RateLimit fields; a new window lets requests through', async () => {
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
  assert.is(((await over.json()) as { error: string }).error, 'Rate limit of 100 requests per 900 seconds exceeded; retry in 840 seconds');
  assert.is((await get('/api/image/brand/papermc?size=333&format=webp')).status, 429, 'an image that would need rendering');
  assert.is((await get('/api/charts/example?days=3')).status, 429);
  ctx.now += 840_000;
  const next = await get('/api/plugin-versions');
  assert.is(next.status, 200);
  assert.is(next.headers.get('x-ratelimit-remaining'), '99');
});

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

limit('an owner\'s private chart is not limited; a public chart is', async () => {
  const owner = JSON.parse((await runDepot(['user', 'add', 'rita'], ctx.workspace)).stdout) as { token: string };
  const secret = JSON.parse((await runDepot(['server', 'add', '--owner', 'rita', '--private'], ctx.workspace)).stdout) as { id: string };
  const open = JSON.parse((await runDepot(['server', 'add', '--owner', 'rita'], ctx.workspace)).stdout) as { id: string };
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
limit.run();
