import { Redis } from 'ioredis';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hashSecret } from '../server/http/auth.ts';
import {
  findProgram,
  makeAccounts,
  makeWorkspace,
  runDepot,
  snapshotFiles,
  spawnOrigin,
  startRedis,
  until,
  type Accounts,
  type OriginProcess,
  type RedisServer,
  type Workspace,
} from './helpers.ts';

// `user list|remove`, `server list|remove|token` as an operator types them, against real origins.

type Ctx = { workspace: Workspace; accounts: Accounts; origins: OriginProcess[]; env: Record<string, string> };

const chart = (origin: OriginProcess, id: string, token?: string) =>
  fetch(`${origin.url}/api/servers/${id}/chart/players?days=7`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
const ingest = (origin: OriginProcess, id: string, key: string, idempotencyKey?: string) =>
  fetch(`${origin.url}/api/servers/${id}/stats`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${key}`,
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body: JSON.stringify({ players: 7 }),
  });

async function depot(ctx: Ctx, args: string[]) {
  const result = await runDepot(args, ctx.workspace, ctx.env);
  assert.is(result.code, 0, `depot ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

async function stopOrigins(origins: OriginProcess[] = []) {
  for (const origin of origins) {
    if (origin.child.exitCode === null) origin.child.kill('SIGTERM');
    await origin.exited;
  }
}

/** Every origin answers `status` for `request` within `ms` of now. */
async function allAnswer(ctx: Ctx, status: number, request: (o: OriginProcess) => Promise<Response>, ms: number) {
  for (const origin of ctx.origins)
    await until(async () => (await request(origin)).status === status, `${origin.url} answers ${status}`, ms);
}

const REDIS = findProgram('redis-server');
if (!REDIS)
  console.warn(
    'accounts.test.ts: redis-server not installed, the two-origin tests not run (apt-get install -y redis-server)',
  );
else {
  const ctx = {} as Ctx & { redis: RedisServer };
  const shared = suite('server token and server remove: two origins on one Redis');
  shared.before(async () => {
    ctx.workspace = await makeWorkspace();
    ctx.redis = await startRedis(REDIS);
    ctx.env = { REDIS_URL: ctx.redis.url };
    ctx.accounts = await makeAccounts(ctx.workspace, ctx.env);
    ctx.origins = [await spawnOrigin(ctx.workspace, ctx.env), await spawnOrigin(ctx.workspace, ctx.env)];
  });
  shared.after(async () => {
    await stopOrigins(ctx.origins);
    await ctx.redis?.stop();
    await ctx.workspace?.remove();
  });

  shared('a rotated ingest key is refused at once by both origins; the new one is printed once and taken', async () => {
    const { id, ingestKey: old } = ctx.accounts.publicServer;
    for (const origin of ctx.origins) assert.is((await ingest(origin, id, old)).status, 204);
    const rotated = await depot(ctx, ['server', 'token', id]);
    assert.equal(Object.keys(rotated).sort(), ['id', 'ingestKey']);
    assert.is(rotated.id, id);
    assert.match(rotated.ingestKey, /^dpk_/);
    assert.is.not(rotated.ingestKey, old);
    // No waiting: the very next request on either origin is refused.
    for (const origin of ctx.origins) {
      const refused = await ingest(origin, id, old);
      assert.is(refused.status, 401);
      assert.match(((await refused.json()) as { error: string }).error, /Wrong ingest key/);
      assert.is((await ingest(origin, id, rotated.ingestKey)).status, 204);
    }
    ctx.accounts.publicServer.ingestKey = rotated.ingestKey;
    const listed = await runDepot(['server', 'list'], ctx.workspace, ctx.env);
    for (const secret of [old, rotated.ingestKey, hashSecret(old), hashSecret(rotated.ingestKey), 'ingestKeyHash'])
      assert.not.ok(listed.stdout.includes(secret), 'server list shows no key nor its digest');
    // The rotation is in the audit log (the Redis stream), by its actor, without either key.
    const audit = await runDepot(['audit', '--target', id], ctx.workspace, ctx.env);
    const records = audit.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { action: string; actor: string });
    assert.ok(
      records.some((record) => record.action === 'server token'),
      audit.stdout,
    );
    for (const secret of [old, rotated.ingestKey, hashSecret(old), hashSecret(rotated.ingestKey)])
      assert.not.ok(audit.stdout.includes(secret), 'the audit log holds no key nor its digest');
  });

  shared('server list: ids, names, owners, private or public, sample days; --owner filters', async () => {
    const { publicServer, privateServer } = ctx.accounts;
    const { servers } = await depot(ctx, ['server', 'list']);
    assert.equal(
      servers.map((s: { id: string }) => s.id),
      [publicServer.id, privateServer.id],
    );
    const [shownPublic, shownPrivate] = servers;
    assert.equal(
      { ...shownPublic, createdAt: undefined },
      { id: publicServer.id, name: 'Public SMP', owner: 'olivia', private: false, createdAt: undefined, sampleDays: 1 },
    );
    assert.is(shownPrivate.private, true);
    assert.is(shownPrivate.sampleDays, 0);
    assert.equal(await depot(ctx, ['server', 'list', '--owner', 'mallory']), { servers: [] });
    assert.is((await depot(ctx, ['server', 'list', '--owner', 'olivia'])).servers.length, 2);
  });

  shared(
    'a removed server: chart and ingestion 404 on both origins within a second, nothing of it left in Redis',
    async () => {
      const { id, ingestKey } = ctx.accounts.publicServer;
      assert.is((await ingest(ctx.origins[0]!, id, ingestKey, 'retry-1')).status, 204);
      for (const origin of ctx.origins) {
        assert.is((await chart(origin, id)).status, 200);
        assert.is((await chart(origin, id)).status, 200, 'cached and its record remembered');
      }
      const redis = new Redis(ctx.redis.url);
      try {
        const keysOf = async () => (await redis.keys('*')).filter((key) => key.includes(id));
        const before = await keysOf();
        for (const kind of ['servers:', 'samples:', 'idempotency:', 'cache:charts:'])
          assert.ok(
            before.some((key) => key.includes(kind)),
            `${kind} stored before: ${before.join(' ')}`,
          );
        const removed = await depot(ctx, ['server', 'remove', id, '--yes']);
        assert.equal(
          { ...removed, cachedCharts: removed.cachedCharts > 0 },
          { id, owner: 'olivia', removed: true, sampleDays: 1, idempotencyKeys: 1, cachedCharts: true },
        );
        await allAnswer(ctx, 404, (origin) => chart(origin, id), 1000);
        for (const origin of ctx.origins) assert.is((await ingest(origin, id, ingestKey)).status, 404);
        assert.equal(await keysOf(), [], 'its samples, key digest, Idempotency-Keys and cached charts are gone');
      } finally {
        redis.disconnect();
      }
      const { servers } = await depot(ctx, ['server', 'list']);
      assert.equal(
        servers.map((s: { id: string }) => s.id),
        [ctx.accounts.privateServer.id],
      );
    },
  );

  shared.run();
}

const local = {} as Ctx;
const embedded = suite('user list, user remove and refusals: the embedded store');
embedded.before(async () => {
  local.workspace = await makeWorkspace();
  local.env = {};
  local.accounts = await makeAccounts(local.workspace);
  local.origins = [await spawnOrigin(local.workspace)];
});
embedded.after(async () => {
  await stopOrigins(local.origins);
  await local.workspace?.remove();
});

embedded('refusals: one line naming the problem, exit 1, data/, the state store and the tree unchanged', async () => {
  const { publicServer } = local.accounts;
  await depot(local, ['webhook', 'add', 'http://127.0.0.1:9/hook', '--owner', 'olivia']);
  const unknownServer = '00000000-0000-4000-8000-000000000000';
  const cases: [string[], RegExp][] = [
    [['server', 'remove', publicServer.id], /^depot server: --yes: missing; removing server [0-9a-f-]{36} deletes/],
    [['server', 'remove', unknownServer, '--yes'], /^depot server: no server with id 0{8}-/],
    [['server', 'remove', 'nope', '--yes'], /^depot server: serverId must be a UUID/],
    [['server', 'remove'], /^depot server: missing the server id/],
    [['server', 'token', unknownServer], /^depot server: no server with id/],
    [['server', 'list', '--owner', 'nobody'], /^depot server: --owner: no user "nobody"/],
    [['user', 'remove', 'nobody'], /^depot user: no user "nobody"/],
    [['user', 'remove'], /^depot user: missing the username/],
    [
      ['user', 'remove', 'olivia'],
      /^depot user: user olivia still owns 2 servers \([0-9a-f-]{36}, [0-9a-f-]{36}\) and 1 webhook \(wh-[0-9a-f]{12}\): remove them first, or pass --force/,
    ],
    [['webhook', 'add', 'http://127.0.0.1:9/hook', '--owner', 'nobody'], /^depot webhook: --owner: no user "nobody"/],
  ];
  const folders = [local.workspace.dataDir, local.workspace.storageDir, local.workspace.distDir];
  const before = await Promise.all(folders.map(snapshotFiles));
  for (const [args, message] of cases) {
    const result = await runDepot(args, local.workspace);
    assert.is(result.code, 1, args.join(' '));
    assert.is(result.stdout, '', args.join(' '));
    assert.match(result.stderr, message);
    assert.is(result.stderr.trim().split('\n').length, 1, `one line: ${result.stderr}`);
  }
  assert.equal(await Promise.all(folders.map(snapshotFiles)), before);
  assert.is((await chart(local.origins[0]!, publicServer.id)).status, 200);
});

embedded('user list: profiles and what each owns, never a token', async () => {
  const { users } = await depot(local, ['user', 'list']);
  assert.equal(
    users.map((u: { username: string; servers: number; webhooks: number }) => [u.username, u.servers, u.webhooks]),
    [
      ['alice', 0, 0],
      ['bob', 0, 0],
      ['carol', 0, 0],
      ['olivia', 2, 1],
      ['mallory', 0, 0],
    ],
  );
  const listed = await runDepot(['user', 'list'], local.workspace);
  for (const token of [local.accounts.owner, local.accounts.other, hashSecret(local.accounts.owner)])
    assert.not.ok(listed.stdout.includes(token));
});

embedded('user remove --force: their servers, webhooks and tokens go; the chart is 404 within a second', async () => {
  const { privateServer, owner } = local.accounts;
  const origin = local.origins[0]!;
  assert.is((await chart(origin, privateServer.id, owner)).status, 200);
  const publishing = await depot(local, ['token', 'add', 'olivia', '--name', 'ci']);
  const removed = await depot(local, ['user', 'remove', 'olivia', '--force']);
  assert.equal(removed.publishingTokens, [publishing.id], 'their publishing tokens are revoked with them');
  const { tokens: left } = await depot(local, ['token', 'list']);
  assert.not.ok(left.some((t: { id: string }) => t.id === publishing.id));
  assert.is(removed.username, 'olivia');
  assert.equal(removed.servers.sort(), [local.accounts.publicServer.id, privateServer.id].sort());
  assert.is(removed.webhooks.length, 1);
  assert.is(removed.tokens, 1);
  await until(async () => (await chart(origin, privateServer.id, owner)).status === 404, 'chart 404', 1000);
  assert.is((await ingest(origin, privateServer.id, privateServer.ingestKey)).status, 404);
  assert.equal(await depot(local, ['server', 'list']), { servers: [] });
  assert.equal((await depot(local, ['webhook', 'list'])).webhooks, []);
  const { users } = await depot(local, ['user', 'list']);
  assert.not.ok(users.some((u: { username: string }) => u.username === 'olivia'));
  const audit = await runDepot(['audit', '--target', 'olivia'], local.workspace);
  const [record] = audit.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { action: string; changes: { force: boolean; servers: string[] } })
    .filter((r) => r.action === 'user remove');
  assert.ok(record, audit.stdout);
  assert.is(record.changes.force, true);
  assert.equal(record.changes.servers.sort(), removed.servers.sort());
});

embedded(
  'a removed user who released versions: the build passes, their versions keep createdBy, lose createdByUser',
  async () => {
    const origin = local.origins[0]!;
    type Listed = { id: string; createdBy: string; createdByUser?: { username: string } };
    const list = async () =>
      ((await (await fetch(`${origin.url}/api/plugin-versions`)).json()) as { versions: Listed[] }).versions;
    const carols = (await list()).filter((v) => v.createdBy === 'carol');
    assert.ok(carols.length > 0 && carols.every((v) => v.createdByUser?.username === 'carol'));
    await depot(local, ['user', 'remove', 'carol']);
    await until(
      async () => (await list()).every((v) => v.createdByUser?.username !== 'carol'),
      'new tree served',
      10_000,
    );
    const after = (await list()).filter((v) => v.createdBy === 'carol');
    assert.equal(
      after.map((v) => v.id),
      carols.map((v) => v.id),
    );
    for (const version of after) assert.not.ok('createdByUser' in version);
  },
);

embedded.run();
