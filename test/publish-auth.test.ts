import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { H3, toNodeHandler } from 'h3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ENDPOINTS } from '../server/endpoints.ts';
import { newSecret } from '../server/http/auth.ts';
import { createErrorAnswer } from '../server/http/errors.ts';
import type { RequestLog } from '../server/http/request-log.ts';
import { authenticatePublisher } from '../server/publish/auth.ts';
import { publishTokenStore } from '../server/publish-tokens/store.ts';
import { redisReady } from '../server/redis.ts';
import { createFileStorage, createRedisStorage, type StateStore } from '../server/storage.ts';
import { userTokenStore } from '../server/users.ts';
import {
  findProgram,
  makeWorkspace,
  rawRequest,
  runDepot,
  startRedis,
  startTestOrigin,
  type RawAnswer,
  type RedisServer,
  type Workspace,
} from './helpers.ts';
import { NO_LOG } from '../server/helpers/log.ts';

// Issue 30 items 1 and 4: a publishing request is authenticated by `Authorization: Bearer dpp_...`
// alone. Tokens come from `depot token add` as an operator types it; each app below is a real H3
// app on a loopback port whose one route calls authenticatePublisher, over the real state store.

const DAY = 86_400_000;

type PublishApp = { url: string; close(): Promise<void> };

/** An app with one publishing route, over `state`, its clock `now()` (so a test can move it on). */
async function startPublishApp(state: StateStore, now: () => number): Promise<PublishApp> {
  const app = new H3({ onError: createErrorAnswer(ENDPOINTS), silent: true });
  const store = publishTokenStore(state.storage, state.redis);
  app.post('/api/plugin-versions', (event) => authenticatePublisher(store, event, now()));
  const server: Server = createServer(toNodeHandler(app));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/plugin-versions`,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

const publish = (url: string, headers: Record<string, string> = {}) => rawRequest(url, { method: 'POST', headers });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const body = (answer: RawAnswer) => JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;

/** The CLI as an operator types it, in `workspace` with `env`; its printed JSON. */
async function depot(workspace: Workspace, env: Record<string, string>, args: string[]) {
  const result = await runDepot(args, workspace, env);
  assert.is(result.code, 0, `depot ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** A 401 every refused credential shares: the same status, challenge and body, and never the credential. */
function assertUnauthorized(answer: RawAnswer, credential: string, first: RawAnswer) {
  assert.is(answer.status, 401, `${credential}: ${answer.body}`);
  assert.is(answer.headers['www-authenticate'], 'Bearer');
  assert.equal(body(answer), body(first), 'one wording, so a caller cannot tell which');
  if (credential.includes('dp'))
    assert.not.ok(answer.body.toString().includes(credential.slice(4)), 'the body repeats no token');
}

type Backend = { env: Record<string, string>; open(): StateStore; close(): Promise<void> };

const filesBackend = (workspace: Workspace): Backend => ({
  env: {},
  open: () => ({ storage: createFileStorage(workspace.storageDir) }),
  close: async () => {},
});

async function redisBackend(): Promise<Backend & { server: RedisServer }> {
  const server = await startRedis(findProgram('redis-server')!);
  const states: StateStore[] = [];
  return {
    server,
    env: { REDIS_URL: server.url },
    open() {
      const state = createRedisStorage(server.url, NO_LOG);
      states.push(state);
      return state;
    },
    async close() {
      for (const state of states) state.redis!.disconnect();
      await server.stop();
    },
  };
}

/** What every backend must do: the table of credentials, the query string, and lastUsedAt. */
function publisherSuite(name: string, openBackend: (workspace: Workspace) => Promise<Backend>) {
  const test = suite(`authenticatePublisher over HTTP (${name})`);
  const ctx = {} as { workspace: Workspace; backend: Backend; state: StateStore; app: PublishApp; clock: number };
  test.before(async () => {
    ctx.workspace = await makeWorkspace({ build: false });
    ctx.backend = await openBackend(ctx.workspace);
    ctx.state = ctx.backend.open();
    if (ctx.state.redis) assert.ok(await redisReady(ctx.state.redis, 5000));
    ctx.clock = Date.now();
    ctx.app = await startPublishApp(ctx.state, () => ctx.clock);
  });
  test.after(async () => {
    await ctx.app?.close();
    await ctx.backend?.close();
    await ctx.workspace?.remove();
  });

  test('a token from `depot token add` acts as its user; every other credential gets one 401', async () => {
    const { workspace, backend } = ctx;
    const added = await depot(workspace, backend.env, ['token', 'add', 'alice', '--name', 'ci']);
    assert.match(added.token, /^dpp_[A-Za-z0-9_-]{43}$/);
    const ok = await publish(ctx.app.url, bearer(added.token));
    assert.is(ok.status, 200, ok.body.toString());
    assert.equal(body(ok), { username: 'alice', tokenId: added.id, scopes: ['publish'], anyVersion: false });

    const revoked = await depot(workspace, backend.env, ['token', 'add', 'alice', '--expires', 'never']);
    assert.is((await publish(ctx.app.url, bearer(revoked.token))).status, 200);
    await depot(workspace, backend.env, ['token', 'revoke', revoked.id]);
    // The other kinds of secret, real ones of the same store: a user's token and a server's ingest key.
    const userToken = newSecret('dpt');
    await userTokenStore(ctx.state.storage).add('alice', userToken);
    const { ingestKey } = await depot(workspace, backend.env, ['server', 'add', '--owner', 'alice']);
    assert.match(ingestKey, /^dpk_/);

    const none = await publish(ctx.app.url);
    const refused: [string, Record<string, string>][] = [
      ['', {}],
      [revoked.token, bearer(revoked.token)],
      [userToken, bearer(userToken)],
      [ingestKey, bearer(ingestKey)],
      [newSecret('dpp'), bearer(newSecret('dpp'))],
      [added.token, { authorization: `Basic ${Buffer.from(`alice:${added.token}`).toString('base64')}` }],
      [added.token, { authorization: added.token }],
      [added.token, { authorization: `Bearer ${added.token}x` }],
    ];
    for (const [credential, headers] of refused)
      assertUnauthorized(await publish(ctx.app.url, headers), `${credential} (${JSON.stringify(headers)})`, none);
    assert.match(String(body(none).error), /Authorization: Bearer/);

    // Expired: the default --expires is 90 days from the command; the app's clock moves past it.
    const expires = Date.parse(added.expiresAt);
    assert.ok(Math.abs(expires - (Date.now() + 90 * DAY)) < 60_000, added.expiresAt);
    const clock = ctx.clock;
    try {
      ctx.clock = expires - 1000;
      assert.is((await publish(ctx.app.url, bearer(added.token))).status, 200, 'a second before it expires');
      ctx.clock = expires;
      assertUnauthorized(await publish(ctx.app.url, bearer(added.token)), added.token, none);
    } finally {
      ctx.clock = clock;
    }
  });

  test('a token in the query string is a 400 naming the header, even with the header too', async () => {
    const { token } = await depot(ctx.workspace, ctx.backend.env, ['token', 'add', 'alice']);
    const queries = [`token=${token}`, 'access_token=abc', 'Token=abc', `ref=${token}`, `${token}=`, 'x=1&token='];
    for (const query of queries)
      for (const headers of [bearer(token), {}]) {
        const answer = await publish(`${ctx.app.url}?${query}`, headers);
        assert.is(answer.status, 400, `?${query}: ${answer.body}`);
        assert.match(String(body(answer).error), /Authorization header \(Authorization: Bearer <token>\)/);
        assert.not.ok(answer.body.toString().includes(token.slice(4)), 'the body repeats no token');
      }
    assert.is((await publish(`${ctx.app.url}?dry=1`, bearer(token))).status, 200, 'other parameters pass');
  });

  test('lastUsedAt: set by a request, then written at most once a minute', async () => {
    const { workspace, backend } = ctx;
    const { id, token } = await depot(workspace, backend.env, ['token', 'add', 'alice', '--name', 'used']);
    const lastUsed = async () =>
      (
        (await depot(workspace, backend.env, ['token', 'list'])).tokens as { id: string; lastUsedAt: string | null }[]
      ).find((t) => t.id === id)!.lastUsedAt;
    assert.is(await lastUsed(), null);
    const start = ctx.clock;
    for (const [at, expected] of [
      [start, start],
      [start + 59_000, start],
      [start + 60_000, start + 60_000],
    ] as const) {
      ctx.clock = at;
      const answer = await publish(ctx.app.url, bearer(token));
      assert.is(answer.status, 200, `at +${at - start} ms: ${answer.body}`);
      assert.is(await lastUsed(), new Date(expected).toISOString(), `at +${at - start} ms`);
    }
    ctx.clock = start;
    await depot(workspace, backend.env, ['token', 'revoke', id]);
  });

  return test;
}

publisherSuite('files', async (workspace) => filesBackend(workspace)).run();
publisherSuite('redis', () => redisBackend()).run();

const shared = suite('revocation over two apps sharing one Redis');
shared('a token revoked with the CLI is refused at once by both apps, by the next request', async () => {
  const workspace = await makeWorkspace({ build: false });
  const backend = await redisBackend();
  const apps = [
    await startPublishApp(backend.open(), () => Date.now()),
    await startPublishApp(backend.open(), () => Date.now()),
  ];
  try {
    const { id, token } = await depot(workspace, backend.env, ['token', 'add', 'alice', '--name', 'ci']);
    for (const app of apps) assert.is((await publish(app.url, bearer(token))).status, 200);
    await depot(workspace, backend.env, ['token', 'revoke', id, '--by', 'bob']);
    for (const app of apps) assert.is((await publish(app.url, bearer(token))).status, 401);
  } finally {
    for (const app of apps) await app.close();
    await backend.close();
    await workspace.remove();
  }
});
shared.run();

const origin = suite('a publishing token on the origin');
const live = {} as { workspace: Workspace; origin: Awaited<ReturnType<typeof startTestOrigin>>; log: RequestLog[] };
origin.before(async () => {
  live.workspace = await makeWorkspace();
  live.log = [];
  live.origin = await startTestOrigin(live.workspace, {
    storage: createFileStorage(live.workspace.storageDir),
    log: (entry) => live.log.push(entry),
  });
});
origin.after(async () => {
  await live.origin?.close();
  await live.workspace?.remove();
});

origin('is no ingest key and no owner token: refused where those are expected', async () => {
  const { workspace } = live;
  const server = await depot(workspace, {}, ['server', 'add', '--owner', 'alice', '--private']);
  const { token } = await depot(workspace, {}, ['token', 'add', 'alice']);
  const stats = await rawRequest(`${live.origin.url}/api/servers/${server.id}/stats`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json' },
  });
  assert.is(stats.status, 401, stats.body.toString());
  const chart = await rawRequest(`${live.origin.url}/api/servers/${server.id}/chart/players`, {
    headers: bearer(token),
  });
  assert.is(chart.status, 403, chart.body.toString());
  const minted = await rawRequest(`${live.origin.url}/api/servers/${server.id}/chart-urls`, {
    method: 'POST',
    headers: bearer(token),
  });
  assert.is(minted.status, 403, minted.body.toString());
});

origin('never reaches the request log, in the query or pasted into the path', async () => {
  const token = newSecret('dpp');
  live.log.length = 0;
  await rawRequest(`${live.origin.url}/api/plugin-versions/${token}?token=${token}&ref=${token}`);
  await rawRequest(`${live.origin.url}/api/plugin-versions?access_token=${token}`);
  assert.is(live.log.length, 2);
  const logged = JSON.stringify(live.log);
  assert.not.ok(logged.includes(token.slice(4)), logged);
  assert.is(live.log[0]!.path, '/api/plugin-versions/dpp_[redacted]');
  assert.is(live.log[1]!.path, '/api/plugin-versions');
});
origin.run();
