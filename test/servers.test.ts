import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningOrigin } from '../server/origin.ts';
import { createFileStorage } from '../server/storage.ts';
import { DayRecord } from '../server/charts/samples.ts';
import {
  makeAccounts,
  makeWorkspace,
  runDepot,
  spawnOrigin,
  startTestOrigin,
  type Accounts,
  type Workspace,
} from './helpers.ts';

const ctx = {} as { workspace: Workspace; accounts: Accounts; origin: RunningOrigin };

async function setupAccounts() {
  ctx.workspace = await makeWorkspace();
  ctx.accounts = await makeAccounts(ctx.workspace);
}

const desc = (svg: string) =>
  new DOMParser().parseFromString(svg, 'image/svg+xml').getElementsByTagName('desc')[0]?.textContent;
const chart = (id: string, init?: RequestInit, query = '') =>
  fetch(`${ctx.origin.url}/api/servers/${id}/chart/players${query}`, init);
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
const ingest = (id: string, key: string | null, body: unknown) =>
  fetch(`${ctx.origin.url}/api/servers/${id}/stats`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const cli = suite('depot user/server/stats add');
cli.before(setupAccounts);
cli.after(() => ctx.workspace.remove());
cli('user add prints a token once and adds a public profile shown as createdByUser', async () => {
  assert.match(ctx.accounts.owner, /^dpt_[\w-]{43}$/);
  const users = JSON.parse(
    await (await import('node:fs/promises')).readFile(join(ctx.workspace.dataDir, 'users.json'), 'utf8'),
  ) as { username: string; nickname?: string }[];
  assert.equal(users.find((u) => u.username === 'olivia')?.nickname, 'Olivia');
  const stored = JSON.stringify(
    await createFileStorage(ctx.workspace.storageDir).getItems(
      await createFileStorage(ctx.workspace.storageDir).getKeys(),
    ),
  );
  assert.not.ok(stored.includes(ctx.accounts.owner), 'the token itself is never stored');
  assert.not.ok(stored.includes(ctx.accounts.privateServer.ingestKey), 'nor the ingest key');
});
cli('server add prints a UUID and an ingest key', () => {
  assert.match(ctx.accounts.privateServer.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.match(ctx.accounts.privateServer.ingestKey, /^dpk_/);
});
const refusals: [string[], RegExp][] = [
  [['user', 'add', 'olivia'], /user olivia exists already/],
  [['user', 'add', 'bad name!'], /username: must be 1-64 letters/],
  [['user', 'add', 'zed', '--image', 'ftp://x'], /image: /],
  [['server', 'add', '--owner', 'nobody'], /--owner: no user "nobody"/],
  [['server', 'add'], /--owner: missing/],
  [
    ['server', 'add', '--owner', 'olivia', '--name', 'lobby\u202Egnp'],
    /--name: contains a format character \(U\+202E\)/,
  ],
  [['stats', 'add', 'not-a-uuid', '5'], /serverId must be a UUID/],
  [['stats', 'add', '00000000-0000-4000-8000-000000000000', '5'], /no server with id/],
  [['stats', 'add', '@server', 'many'], /players must be an integer from 0 to 1000000/],
  [
    ['stats', 'add', '@server', '5', '--at', '2099-01-01T00:00:00Z'],
    /at must not be more than 5 minutes in the future/,
  ],
  [['stats', 'add', '@server', '5', '--at', 'yesterday'], /--at: must be an ISO 8601 timestamp/],
  // issue 29 made `server remove` a command: without an id it is refused; an unknown verb still is.
  [['server', 'remove'], /missing the server id: depot server remove <id> --yes/],
  [['server', 'rename'], /unknown command "server rename"/],
];
for (const [args, message] of refusals) {
  cli(`refuses ${args.join(' ')}`, async () => {
    const result = await runDepot(
      args.map((a) => (a === '@server' ? ctx.accounts.publicServer.id : a)),
      ctx.workspace,
    );
    assert.is(result.code, 1);
    assert.match(result.stderr, message);
  });
}
cli('chart-url refuses hostile option values in one line that never repeats them', async () => {
  const huge = 'x'.repeat(120_000);
  const cases: [string, string, RegExp][] = [
    ['--theme', 'dark\u202e', /^depot chart-url: --theme: must be light, dark or auto$/],
    ['--expires', ']]>]]>', /^depot chart-url: --expires: must be a duration from 1m to 365d/],
    ['--width', '$var', /^depot chart-url: --width: must be an integer from 200 to 2000$/],
    ['--format', 'svg\u0007', /^depot chart-url: --format: must be svg, png, json or csv$/],
    ['--background', huge, /^depot chart-url: --background: /],
  ];
  for (const [option, value, message] of cases) {
    const result = await runDepot(['chart-url', ctx.accounts.publicServer.id, option, value], ctx.workspace);
    assert.is(result.code, 1, option);
    assert.match(result.stderr.trim(), message);
    assert.is(result.stderr.trim().split('\n').length, 1, result.stderr.slice(0, 300));
    assert.not.ok(result.stderr.includes(value), `${option}: the value is not repeated`);
  }
});
cli.run();

const http = suite('ingestion and charts over HTTP');
let now = Date.parse('2026-11-20T12:30:00Z');
http.before(async () => {
  await setupAccounts();
  ctx.origin = await startTestOrigin(ctx.workspace, {
    storage: createFileStorage(ctx.workspace.storageDir),
    now: () => now,
  });
});
http.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});

http('a public chart with no data yet is a valid chart, public for 5 minutes', async () => {
  const response = await chart(ctx.accounts.publicServer.id);
  assert.is(response.status, 200);
  assert.is(response.headers.get('cache-control'), 'public, max-age=300');
  assert.match(desc(await response.text())!, /^No data yet/);
});
http('samples fold into the chart: peak is the highest sample, average their mean', async () => {
  const { id, ingestKey } = ctx.accounts.privateServer;
  const samples = [
    { at: '2026-11-20T09:00:00Z', players: 10 },
    { at: '2026-11-20T09:30:00Z', players: 30 },
    { at: '2026-11-20T11:15:00Z', players: 5 },
  ];
  assert.is((await ingest(id, ingestKey, { samples })).status, 204);
  assert.is((await ingest(id, ingestKey, { players: 7 })).status, 204); // now: 12:30
  const response = await chart(id, bearer(ctx.accounts.owner), '?days=1');
  assert.is(response.status, 200);
  assert.is(response.headers.get('cache-control'), 'private, max-age=300');
  // Hourly points: 09:00 (max 30, mean 20), 11:00 (5), 12:00 (7); the day's mean of means is 32/3.
  assert.is(desc(await response.text()), 'Over the last day: peak 30 players, average 10.7 players.');
});
http('the access matrix of a private chart', async () => {
  const { id } = ctx.accounts.privateServer;
  assert.is((await chart(id)).status, 403);
  assert.is((await chart(id, bearer('dpt_not-a-token'))).status, 403);
  assert.is((await chart(id, bearer(ctx.accounts.other))).status, 403);
  const owner = await chart(id, bearer(ctx.accounts.owner));
  assert.is(owner.status, 200);
  assert.is((await chart(ctx.accounts.publicServer.id, bearer(ctx.accounts.other))).status, 200);
});
http("charts are cached for 5 minutes, and a cached private chart is still only its owner's", async () => {
  const { id, ingestKey } = ctx.accounts.privateServer;
  const before = await (await chart(id, bearer(ctx.accounts.owner), '?days=1')).text();
  assert.is((await ingest(id, ingestKey, { players: 99 })).status, 204);
  assert.is((await chart(id, bearer(ctx.accounts.other), '?days=1')).status, 403);
  assert.is(
    await (await chart(id, bearer(ctx.accounts.owner), '?days=1')).text(),
    before,
    'within 5 minutes: the cached chart',
  );
  now += 5 * 60_000 + 1000;
  assert.match(desc(await (await chart(id, bearer(ctx.accounts.owner), '?days=1')).text())!, /peak 99 players/);
});
const ingestErrors: [string, (a: Accounts) => [string, string | null, unknown], number, RegExp][] = [
  ['no key', (a) => [a.publicServer.id, null, { players: 1 }], 401, /Send the server's ingest key/],
  [
    "another server's key",
    (a) => [a.publicServer.id, a.privateServer.ingestKey, { players: 1 }],
    401,
    /Wrong ingest key/,
  ],
  [
    'an unknown server',
    (a) => ['00000000-0000-4000-8000-000000000000', a.publicServer.ingestKey, { players: 1 }],
    404,
    /No server with id/,
  ],
  ['an id that is not a UUID', (a) => ['srv-1', a.publicServer.ingestKey, { players: 1 }], 400, /^id must be a UUID$/],
  [
    'a body that is not JSON',
    (a) => [a.publicServer.id, a.publicServer.ingestKey, '{players'],
    400,
    /^body must be JSON/,
  ],
  [
    'negative players',
    (a) => [a.publicServer.id, a.publicServer.ingestKey, { players: -1 }],
    400,
    /^players: must be an integer from 0 to 1000000$/,
  ],
  [
    'fractional players',
    (a) => [a.publicServer.id, a.publicServer.ingestKey, { players: 1.5 }],
    400,
    /^players: must be an integer/,
  ],
  [
    'too many players',
    (a) => [a.publicServer.id, a.publicServer.ingestKey, { players: 1_000_001 }],
    400,
    /^players: must be an integer/,
  ],
  [
    'an unknown field',
    (a) => [a.publicServer.id, a.publicServer.ingestKey, { players: 1, extra: true }],
    400,
    /^body: Unrecognized key: "extra"$/,
  ],
  [
    'no samples',
    (a) => [a.publicServer.id, a.publicServer.ingestKey, { samples: [] }],
    400,
    /^samples: must hold at least one sample$/,
  ],
  [
    '1,001 samples',
    (a) => [
      a.publicServer.id,
      a.publicServer.ingestKey,
      { samples: Array.from({ length: 1001 }, () => ({ at: '2026-11-20T10:00:00Z', players: 1 })) },
    ],
    400,
    /^samples: must hold at most 1000 samples$/,
  ],
  [
    'a sample from the future',
    (a) => [
      a.publicServer.id,
      a.publicServer.ingestKey,
      {
        samples: [
          { at: '2026-11-20T10:00:00Z', players: 1 },
          { at: '2026-11-20T13:00:00Z', players: 1 },
        ],
      },
    ],
    400,
    /^samples\[1\]\.at must not be more than 5 minutes in the future$/,
  ],
  [
    'a sample past retention',
    (a) => [a.publicServer.id, a.publicServer.ingestKey, { samples: [{ at: '2025-11-01T10:00:00Z', players: 1 }] }],
    400,
    /^samples\[0\]\.at must be within the last 365 days$/,
  ],
  [
    'a body over 256 KiB',
    (a) => [a.publicServer.id, a.publicServer.ingestKey, `{"players":1,"pad":"${'x'.repeat(300_000)}"}`],
    413,
    /^body must be at most 262144 bytes$/,
  ],
  [
    'a bad timestamp',
    (a) => [a.publicServer.id, a.publicServer.ingestKey, { samples: [{ at: 'noon', players: 1 }] }],
    400,
    /^samples\[0\]\.at: must be an ISO 8601 timestamp$/,
  ],
];
for (const [name, request, status, message] of ingestErrors) {
  http(`ingestion: ${status} for ${name}`, async () => {
    const response = await ingest(...request(ctx.accounts));
    assert.is(response.status, status);
    assert.match(((await response.json()) as { error: string }).error, message);
  });
}
http('a server id in upper case is the same server, for charts and ingestion', async () => {
  const { id, ingestKey } = ctx.accounts.publicServer;
  const upper = id.toUpperCase();
  const [lower, shouted] = [await chart(id, undefined, '?days=2'), await chart(upper, undefined, '?days=2')];
  assert.is(shouted.status, 200);
  assert.is(shouted.headers.get('etag'), lower.headers.get('etag'));
  assert.is(await shouted.text(), await lower.text());
  assert.is((await ingest(upper, ingestKey, { players: 4 })).status, 204);
  const priv = ctx.accounts.privateServer;
  assert.is((await chart(priv.id.toUpperCase())).status, 403, 'still private in any letter case');
  assert.is((await chart(priv.id.toUpperCase(), bearer(ctx.accounts.owner))).status, 200);
});
http('chart errors: 400 for a bad id or parameter, 404 for an unknown server', async () => {
  assert.is((await chart('nope')).status, 400);
  assert.is((await chart('00000000-0000-4000-8000-000000000000')).status, 404);
  const bad = await chart(ctx.accounts.publicServer.id, undefined, '?height=100');
  assert.is(bad.status, 400);
  assert.equal(await bad.json(), { error: 'height must be an integer from 200 to 2000' });
});
http.run();

const addresses = suite('PRIVATE_CHART_IPS');
addresses.before(setupAccounts);
addresses.after(() => ctx.workspace.remove());
addresses('the owner is refused from an address outside the list, served from one inside', async () => {
  const storage = createFileStorage(ctx.workspace.storageDir);
  for (const [list, status] of [
    [['10.0.0.0/8', '::1'], 403],
    [['10.0.0.0/8', '127.0.0.1/32'], 200],
    [['::ffff:127.0.0.1'], 200],
  ] as const) {
    ctx.origin = await startTestOrigin(ctx.workspace, { storage, privateChartIps: [...list] });
    const response = await chart(ctx.accounts.privateServer.id, bearer(ctx.accounts.owner));
    await ctx.origin.close();
    assert.is(response.status, status, list.join(','));
  }
});
addresses('X-Forwarded-For counts only from a trusted proxy (TRUST_PROXY)', async () => {
  const storage = createFileStorage(ctx.workspace.storageDir);
  const forwarded = { headers: { authorization: `Bearer ${ctx.accounts.owner}`, 'x-forwarded-for': '198.51.100.7' } };
  for (const [trustProxy, status] of [
    [[], 403],
    [['127.0.0.1'], 200],
  ] as const) {
    ctx.origin = await startTestOrigin(ctx.workspace, {
      storage,
      privateChartIps: ['198.51.100.0/24'],
      trustProxy: [...trustProxy],
    });
    const response = await chart(ctx.accounts.privateServer.id, forwarded);
    await ctx.origin.close();
    assert.is(response.status, status, `TRUST_PROXY=${trustProxy.join(',')}`);
  }
});
addresses.run();

const durability = suite('durability');
durability.before(setupAccounts);
durability.after(() => ctx.workspace.remove());
durability('a sample answered 204 survives the origin being killed right after', async () => {
  const start = () => spawnOrigin(ctx.workspace);
  const first = await start();
  const { id, ingestKey } = ctx.accounts.publicServer;
  const response = await fetch(`${first.url}/api/servers/${id}/stats`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ingestKey}` },
    body: '{"players":123}',
  });
  assert.is(response.status, 204);
  first.child.kill('SIGKILL');
  await first.exited;
  const second = await start();
  try {
    const svg = await (await fetch(`${second.url}/api/servers/${id}/chart/players?days=1`)).text();
    assert.match(desc(svg)!, /peak 123 players/);
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
});
durability.run();

const idempotent = suite('Idempotency-Key on ingestion');
let clock = Date.parse('2026-11-20T12:30:00Z');
const startIdempotentOrigin = () =>
  startTestOrigin(ctx.workspace, { storage: createFileStorage(ctx.workspace.storageDir), now: () => clock });
idempotent.before(async () => {
  await setupAccounts();
  ctx.origin = await startIdempotentOrigin();
});
idempotent.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});
const ingestWithKey = (key: string, body: unknown) =>
  fetch(`${ctx.origin.url}/api/servers/${ctx.accounts.publicServer.id}/stats`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.accounts.publicServer.ingestKey}`, 'idempotency-key': key },
    body: JSON.stringify(body),
  });
/**
 * How many samples the hour of `at` holds, read from STORAGE_DIR once the origin has folded its
 * journal into the days (a stop folds it; the origin is started again).
 */
async function storedCount(at: string): Promise<number> {
  await ctx.origin.close();
  ctx.origin = await startIdempotentOrigin();
  const time = Date.parse(at);
  const file = join(
    ctx.workspace.storageDir,
    'samples',
    ctx.accounts.publicServer.id,
    String(Math.floor(time / 86_400_000)),
  );
  const day = DayRecord.parse(JSON.parse(await readFile(file, 'utf8').catch(() => '{}')));
  return day[String(Math.floor((time % 86_400_000) / 3_600_000))]?.[2] ?? 0;
}

idempotent(
  'a repeat with the same key and body answers 204 again, marked as replayed, and stores nothing',
  async () => {
    const body = { samples: [{ at: '2026-11-20T08:10:00Z', players: 12 }] };
    const first = await ingestWithKey('retry-1', body);
    assert.is(first.status, 204);
    assert.is(first.headers.get('idempotent-replayed'), null);
    const again = await ingestWithKey('retry-1', body);
    assert.is(again.status, 204);
    assert.is(again.headers.get('idempotent-replayed'), 'true');
    assert.is(await storedCount('2026-11-20T08:10:00Z'), 1);
  },
);
idempotent('concurrent repeats of one key store once', async () => {
  const body = { samples: [{ at: '2026-11-20T07:10:00Z', players: 3 }] };
  const answers = await Promise.all(Array.from({ length: 10 }, () => ingestWithKey('burst', body)));
  assert.equal(
    answers.map((a) => a.status),
    Array(10).fill(204),
  );
  assert.is(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true').length, 9);
  assert.is(await storedCount('2026-11-20T07:10:00Z'), 1);
});
idempotent('the same key with another body is refused with 422', async () => {
  assert.is((await ingestWithKey('reused', { players: 1 })).status, 204);
  const answer = await ingestWithKey('reused', { players: 2 });
  assert.is(answer.status, 422);
  assert.match((await answer.json()).error, /Idempotency-Key was used with another body/);
});
idempotent('a malformed key is a 400 naming the header', async () => {
  for (const key of ['x'.repeat(256), 'tab\there']) {
    const answer = await ingestWithKey(key, { players: 1 });
    assert.is(answer.status, 400, key);
    assert.match((await answer.json()).error, /^Idempotency-Key must be 1 to 255 printable ASCII characters/);
  }
});
idempotent('keys are remembered across a restart, for 24 hours', async () => {
  const body = { samples: [{ at: '2026-11-20T06:10:00Z', players: 40 }] };
  assert.is((await ingestWithKey('restart', body)).status, 204);
  await ctx.origin.close();
  ctx.origin = await startIdempotentOrigin();
  assert.is((await ingestWithKey('restart', body)).headers.get('idempotent-replayed'), 'true');
  assert.is(await storedCount('2026-11-20T06:10:00Z'), 1);
  clock += 24 * 3_600_000 + 1000;
  const later = await ingestWithKey('restart', body);
  assert.is(later.status, 204);
  assert.is(later.headers.get('idempotent-replayed'), null);
  assert.is(await storedCount('2026-11-20T06:10:00Z'), 2);
});
idempotent.run();
