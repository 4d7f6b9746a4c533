import { execFile } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningOrigin } from '../server/origin.ts';
import { redisReady } from '../server/redis.ts';
import { createFileStorage, createRedisStorage, type StateStore } from '../server/storage.ts';
import type { PluginVersion } from '../server/versions/schema.ts';
import { discordMessage } from '../server/webhooks/payload.ts';
import { DELIVERY_WINDOW_MS, MAX_RETRY_DELAY_MS, nextAttemptAt } from '../server/webhooks/retry.ts';
import { attemptDelivery } from '../server/webhooks/deliver.ts';
import { outboxKey, webhookStore } from '../server/webhooks/store.ts';
import {
  ROOT,
  findProgram,
  makeWorkspace,
  pluginJar,
  runDepot,
  spawnOrigin,
  startRedis,
  startTestOrigin,
  runBuildCommand,
  until,
  workspaceEnv,
  type CliResult,
  type OriginProcess,
  type RedisServer,
  type Workspace,
} from './helpers.ts';
import { collectLog } from './collect-log.ts';
import { startReceiver, type Received, type Receiver, type Reply } from './webhook-receiver.ts';

// Webhooks: the operator CLI, an outbox in the state store, deliveries by the running origins to a
// real receiver on loopback that fails as receivers do (503, a hang, then 200).

/** The receiver's side of the signature: HMAC-SHA256 of the raw body with the secret, compared in constant time. */
function signatureHolds(secret: string, request: Received): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(request.body).digest('hex')}`);
  const given = Buffer.from(String(request.headers['x-depot-signature-256'] ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** `npm run --silent depot -- <args>`, as an operator types it, with the workspace's folders. */
function npmDepot(args: string[], workspace: Workspace, env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      'npm',
      ['run', '--silent', 'depot', '--', ...args],
      { cwd: ROOT, env: workspaceEnv(workspace, env), timeout: 120_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The CLI's JSON answer: through npm as typed (`npm: true`), or node directly where npm's start-up adds nothing. */
async function depotJson(args: string[], workspace: Workspace, env: Record<string, string> = {}, npm = false) {
  const result = await (npm ? npmDepot : runDepot)(args, workspace, env);
  assert.is(result.code, 0, `depot ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

type ListedWebhook = {
  id: string;
  url: string;
  format: string;
  pending: number;
  lastOutcome: { delivery: string; state: string; status?: number; error?: string } | null;
  deliveries: {
    delivery: string;
    state: string;
    attempts: number;
    recentAttempts: { status?: number; error?: string }[];
  }[];
};

async function listed(workspace: Workspace, env: Record<string, string> = {}, npm = false): Promise<ListedWebhook[]> {
  return (await depotJson(['webhook', 'list'], workspace, env, npm)).webhooks;
}

const npmJson = (args: string[], workspace: Workspace) => depotJson(args, workspace, {}, true);

const SAMPLE_VERSION: PluginVersion = {
  id: 'plugin-1795000000000-abc123',
  serverSoftware: ['PaperMC', 'Folia'],
  pluginVersion: '1.4.0',
  channel: 'release',
  javaVersion: '21',
  minecraftVersion: '1.21.4',
  proxyVersion: null,
  fileName: 'Plugin-1.4.0.jar',
  fileSize: 1234,
  sha256: 'a'.repeat(64),
  sha512: 'a'.repeat(128),
  downloadUrl: '/api/plugin-versions/download/plugin-1795000000000-abc123',
  createdAt: '2026-11-23T10:00:00.000Z',
  updatedAt: '2026-11-23T10:00:00.000Z',
  createdBy: 'operator',
  isLatest: { PaperMC: true, Folia: true },
};

const pure = suite('retry schedule and Discord message (pure)');

pure('retries start at the base, double, stop at an hour and give up after 24 hours', () => {
  // [failures so far, now, Retry-After, expected delay from now (null: given up)]
  const cases: [number, number, number, number | null][] = [
    [1, 0, 0, 30_000],
    [2, 0, 0, 60_000],
    [5, 0, 0, 480_000],
    [8, 0, 0, MAX_RETRY_DELAY_MS],
    [40, 0, 0, MAX_RETRY_DELAY_MS],
    [1, 0, 120_000, 120_000],
    [1, 0, 7_200_000, MAX_RETRY_DELAY_MS],
    [1, DELIVERY_WINDOW_MS - 60_000, 0, 30_000],
    [3, DELIVERY_WINDOW_MS - 60_000, 0, null],
  ];
  for (const [failures, now, retryAfterMs, expected] of cases) {
    const at = nextAttemptAt(failures, { createdAt: 0, now, baseMs: 30_000, retryAfterMs });
    assert.is(at === null ? null : at - now, expected, `${failures} failures at ${now} ms`);
  }
});

pure(
  'a Discord embed carries version, software, Java, Minecraft, an absolute link and a changelog excerpt when there is one',
  () => {
    const plain = discordMessage({ event: 'release', version: SAMPLE_VERSION }, 'https://depot.example.org');
    const embed = plain.embeds![0]!;
    assert.is(embed.title, 'Version 1.4.0');
    assert.is(embed.url, `https://depot.example.org${SAMPLE_VERSION.downloadUrl}`);
    assert.equal(
      embed.fields.map((f) => [f.name, f.value]),
      [
        ['Software', 'PaperMC, Folia'],
        ['Java', '21'],
        ['Minecraft', '1.21.4'],
      ],
    );
    assert.is(embed.timestamp, SAMPLE_VERSION.createdAt);
    const changelog = `Fixed the thing.\n${'More words here. '.repeat(100)}`;
    const withChangelog = discordMessage(
      { event: 'release', version: { ...SAMPLE_VERSION, channel: 'beta', changelog } },
      'https://depot.example.org/',
    ).embeds![0]!;
    assert.is(withChangelog.title, 'Version 1.4.0 (beta)');
    assert.ok(withChangelog.description.startsWith('Fixed the thing.'));
    assert.ok(
      withChangelog.description.length < 600,
      `an excerpt, not the whole changelog (${withChangelog.description.length})`,
    );
    assert.match(
      withChangelog.description,
      /…\n\n\[Download Plugin-1\.4\.0\.jar\]\(https:\/\/depot\.example\.org\/api\//,
    );
  },
);
pure('a Discord embed names the project as author only when there is one, for a release and a withdrawal alike', () => {
  const project = {
    name: 'DepotDemo',
    icon: { format: 'png' as const, width: 512, height: 512, sha256: 'a'.repeat(64) },
  };
  const author = {
    name: 'DepotDemo',
    url: 'https://depot.example.org/',
    icon_url: 'https://depot.example.org/api/project/icon/180.png',
  };
  const events = [
    { event: 'release', version: SAMPLE_VERSION },
    { event: 'withdraw', version: SAMPLE_VERSION, reason: 'Corrupts worlds.' },
  ] as const;
  for (const payload of events) {
    const neutral = discordMessage(payload, 'https://depot.example.org').embeds![0]!;
    assert.not.ok('author' in neutral, `${payload.event}: no author without data/project.json`);
    const named = discordMessage(payload, 'https://depot.example.org', project).embeds![0]!;
    assert.equal((named as { author?: unknown }).author, author, payload.event);
    assert.equal(
      { ...named, author: undefined },
      { ...neutral, author: undefined },
      `${payload.event}: the rest as before`,
    );
  }
});
pure.run();

const outbox = suite('outbox entries and leases (STORAGE_DIR)');

outbox(
  'two stores over one STORAGE_DIR (the CLI and an origin) attempting one entry at once send it once',
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'depot-outbox-'));
    const receiver = await startReceiver(() => 200, 300);
    const [cliStorage, originStorage] = [createFileStorage(dir), createFileStorage(dir)];
    try {
      const webhook = {
        id: 'wh-0123456789ab',
        url: `${receiver.url}/once`,
        format: 'json' as const,
        events: ['release' as const],
        secret: `dpw_${'s'.repeat(43)}`,
        createdAt: new Date().toISOString(),
      };
      const stores = [webhookStore(cliStorage), webhookStore(originStorage)];
      await stores[0]!.add(webhook);
      const delivery = await stores[0]!.enqueue(webhook.id, { event: 'ping', webhookId: webhook.id }, Date.now());
      const options = { publicUrl: 'http://127.0.0.1:3000', now: Date.now };
      const results = await Promise.all(stores.map((store) => attemptDelivery(store, outboxKey(delivery), options)));
      assert.equal(results.sort(), ['delivered', 'skipped']);
      assert.is(receiver.received.length, 1);

      // An entry that does not parse is an error naming it, left in place; the list skips it.
      await originStorage.setItem(`webhook-outbox:${webhook.id}:delivery-0000000000001-000000000000`, { id: 'x' });
      const error = await attemptDelivery(
        stores[1]!,
        `webhook-outbox:${webhook.id}:delivery-0000000000001-000000000000`,
        options,
      ).catch((e: unknown) => e as Error);
      assert.match(
        String((error as Error).message),
        /webhook-outbox:wh-0123456789ab:delivery-0000000000001-000000000000 is not a readable delivery/,
      );
      assert.equal((await stores[0]!.deliveries(webhook.id)).pending, []);
    } finally {
      await cliStorage.dispose();
      await originStorage.dispose();
      await receiver.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
);
outbox.run();

const cli = suite('depot webhook add/list/remove/test through npm run');
const cliCtx = {} as { workspace: Workspace; receiver: Receiver };
cli.before(async () => {
  cliCtx.workspace = await makeWorkspace({ build: false });
  cliCtx.receiver = await startReceiver();
});
cli.after(async () => {
  await cliCtx.receiver.stop();
  await cliCtx.workspace.remove();
});

cli(
  'add refuses what is not an http(s) URL, a format or an event; list shows no secret; remove forgets it',
  async () => {
    const { workspace } = cliCtx;
    const refusals: [string[], RegExp][] = [
      [['webhook', 'add'], /missing the URL/],
      [['webhook', 'add', 'ftp://127.0.0.1/hook'], /url: must be an http:\/\/ or https:\/\/ URL/],
      [['webhook', 'add', 'file:///etc/passwd'], /url: must be an http:\/\/ or https:\/\/ URL/],
      [['webhook', 'add', 'http://user:pw@127.0.0.1/hook'], /url: must not carry a user name or password/],
      [['webhook', 'add', 'http://127.0.0.1/hook', '--format', 'xml'], /--format: must be one of json, discord/],
      [['webhook', 'add', 'http://127.0.0.1/hook', '--events', 'delete'], /--events: must be release/],
      [['webhook', 'remove', 'wh-000000000000'], /no webhook with id wh-000000000000/],
      [['webhook', 'remove', '../../etc'], /id: must be a webhook id/],
      [['webhook', 'frobnicate'], /unknown command "webhook frobnicate"/],
    ];
    for (const [args, message] of refusals) {
      const result = await npmDepot(args, workspace);
      assert.is(result.code, 1, `${args.join(' ')} is refused`);
      assert.match(result.stderr, message);
    }
    const added = await npmJson(
      ['webhook', 'add', `${cliCtx.receiver.url}/hook`, '--format', 'json', '--events', 'release'],
      workspace,
    );
    assert.match(added.id, /^wh-[0-9a-f]{12}$/);
    assert.match(added.secret, /^dpw_[A-Za-z0-9_-]{43}$/);
    assert.equal([added.format, added.events], ['json', ['release']]);
    const token = 'tOkEn'.repeat(12);
    const discord = await npmJson(
      [
        'webhook',
        'add',
        `${cliCtx.receiver.url}/api/webhooks/123/${token}?wait=true&thread_id=98765432101`,
        '--format',
        'discord',
      ],
      workspace,
    );
    const hooks = await listed(workspace, {}, true);
    assert.is(hooks[0]!.url, `${cliCtx.receiver.url}/hook`, 'a URL with nothing secret shows whole');
    assert.is(
      hooks[1]!.url,
      `${cliCtx.receiver.url}/api/webhooks/…/…?wait=…&thread_id=…`,
      "a Discord webhook's id, token and query values are hidden: the path's shape shows",
    );
    assert.not.match(JSON.stringify(hooks), new RegExp(token), 'list never shows a Discord token');
    assert.equal(
      hooks.map((h) => [h.id, h.format, h.pending, h.lastOutcome]),
      [
        [added.id, 'json', 0, null],
        [discord.id, 'discord', 0, null],
      ],
    );
    assert.not.match(JSON.stringify(hooks), /dpw_/, 'list never shows a secret');
    assert.equal(await npmJson(['webhook', 'remove', discord.id], workspace), { id: discord.id, removed: true });
    assert.equal(
      (await listed(workspace, {}, true)).map((h) => h.id),
      [added.id],
    );

    // test: a ping through the outbox, attempted at once from the CLI (no origin runs here), signed.
    const ping = await npmJson(['webhook', 'test', added.id], workspace);
    assert.is(ping.state, 'delivered');
    assert.equal(
      ping.recentAttempts.map((a: { status?: number }) => a.status),
      [200],
    );
    const request = cliCtx.receiver.received.at(-1)!;
    assert.equal(JSON.parse(request.body), { event: 'ping', webhookId: added.id });
    assert.is(request.headers['x-depot-event'], 'ping');
    assert.is(request.headers['x-depot-delivery'], ping.delivery);
    assert.ok(signatureHolds(added.secret, request), 'the ping is signed with the secret add printed');
    const [after] = await listed(workspace, {}, true);
    assert.equal([after!.pending, after!.lastOutcome?.state, after!.lastOutcome?.status], [0, 'delivered', 200]);
    await npmJson(['webhook', 'remove', added.id], workspace);
    assert.equal(await listed(workspace, {}, true), []);
  },
);
cli.run();

const retries = suite('a release reaches the webhooks: 503, a hang, then 200');
const retryCtx = {} as { workspace: Workspace; json: Receiver; discord: Receiver; origin: RunningOrigin | null };
retries.before(async () => {
  retryCtx.workspace = await makeWorkspace();
  retryCtx.json = await startReceiver((_request, earlier) => ([503, 'hang', 200] as Reply[])[earlier.length] ?? 200);
  retryCtx.discord = await startReceiver(() => 204);
  retryCtx.origin = null;
});
retries.after(async () => {
  await retryCtx.origin?.close();
  await retryCtx.json.stop();
  await retryCtx.discord.stop();
  await retryCtx.workspace.remove();
});

retries(
  'the outbox waits for an origin; the body carries the version the API serves, signed, same id on each attempt',
  async () => {
    const { workspace } = retryCtx;
    const json = await depotJson(['webhook', 'add', `${retryCtx.json.url}/hooks/depot`], workspace);
    const discord = await depotJson(
      ['webhook', 'add', `${retryCtx.discord.url}/api/webhooks/1/x`, '--format', 'discord'],
      workspace,
    );
    const jar = join(workspace.dir, 'Hooked-2.0.0.jar');
    await writeFile(jar, pluginJar('hooked-2.0.0'));
    const release = await runDepot(
      ['release', jar, '--version', '2.0.0', '--java', '17', '--software', 'Purpur'],
      workspace,
    );
    assert.is(release.code, 0, release.stderr);
    const record = JSON.parse(release.stdout);
    assert.match(release.stderr, /\[webhooks\] 2 deliveries written to the outbox/);
    // No origin ran: both wait in the outbox.
    assert.equal(
      (await listed(workspace)).map((h) => h.pending),
      [1, 1],
    );
    assert.is(retryCtx.json.received.length, 0);

    const warnings: string[] = [];
    retryCtx.origin = await startTestOrigin(workspace, {
      storage: undefined,
      storageDir: workspace.storageDir,
      logger: collectLog(warnings),
      publicUrl: 'https://depot.example.org',
      webhookRetryBaseMs: 300,
      webhookTimeoutMs: 1000,
    });
    await until(
      () => retryCtx.json.succeeded.length === 1 && retryCtx.discord.succeeded.length === 1,
      () =>
        `both delivered (the JSON receiver had ${retryCtx.json.received.length} requests and ${retryCtx.json.succeeded.length} answered 2xx, Discord's ${retryCtx.discord.received.length} and ${retryCtx.discord.succeeded.length}; the origin warned: ${warnings.join(' | ') || 'nothing'})`,
    );
    const attempts = retryCtx.json.received;
    assert.is(attempts.length, 3, 'one request per attempt: 503, the hang, 200');
    assert.is(
      new Set(attempts.map((a) => a.headers['x-depot-delivery'])).size,
      1,
      'the same delivery id on every attempt',
    );
    assert.is(new Set(attempts.map((a) => a.body)).size, 1, 'the same bytes on every attempt');
    for (const attempt of attempts) {
      assert.is(attempt.path, '/hooks/depot');
      assert.is(attempt.headers['x-depot-event'], 'release');
      assert.is(attempt.headers['content-type'], 'application/json');
      assert.ok(signatureHolds(json.secret, attempt), 'signed with the secret add printed');
      assert.not.ok(signatureHolds('dpw_' + 'x'.repeat(43), attempt), 'and not with another');
    }
    // Backoff: the retry after the 503 waits the base (300 ms), the one after the hang (1 s timeout) twice that.
    assert.ok(attempts[1]!.at - attempts[0]!.at >= 250, `first retry after ${attempts[1]!.at - attempts[0]!.at} ms`);
    assert.ok(
      attempts[2]!.at - attempts[1]!.at >= 1000 + 550,
      `second retry after ${attempts[2]!.at - attempts[1]!.at} ms`,
    );

    const body = JSON.parse(attempts[0]!.body);
    assert.equal(Object.keys(body), ['event', 'version']);
    const served = (await (await fetch(`${retryCtx.origin.url}/api/plugin-versions`)).json()) as {
      versions: PluginVersion[];
    };
    assert.equal(
      body.version,
      served.versions.find((v) => v.id === record.id),
      'the version object as the API serves it',
    );

    const message = JSON.parse(retryCtx.discord.received[0]!.body);
    assert.is(message.embeds[0].title, 'Version 2.0.0');
    assert.is(message.embeds[0].url, `https://depot.example.org/api/plugin-versions/download/${record.id}`);
    assert.equal(
      message.embeds[0].fields.map((f: { value: string }) => f.value),
      ['Purpur', '17', 'any'],
    );
    assert.is(retryCtx.discord.received[0]!.headers['x-depot-signature-256'], undefined);

    const hooks = await listed(workspace);
    const jsonHook = hooks.find((h) => h.id === json.id)!;
    assert.equal([jsonHook.pending, jsonHook.lastOutcome?.state, jsonHook.lastOutcome?.status], [0, 'delivered', 200]);
    assert.equal([jsonHook.deliveries[0]!.attempts, jsonHook.deliveries[0]!.state], [3, 'delivered']);
    assert.equal(
      jsonHook.deliveries[0]!.recentAttempts.map((a) => a.status ?? a.error),
      [503, 'timed out', 200],
      'each attempt is listed',
    );
    assert.is(hooks.find((h) => h.id === discord.id)!.lastOutcome?.status, 204);
    // The outbox is empty; the finished deliveries are in the log.
    const store = webhookStore(createFileStorage(workspace.storageDir));
    assert.equal(await store.pendingKeys(), []);
    const { finished } = await store.deliveries(json.id);
    assert.equal(
      finished[0]!.recent.map((a) => a.status ?? a.error),
      [503, 'timed out', 200],
    );
  },
);

retries('a delivery still failing 24 hours after it was written is given up and listed as failed', async () => {
  const { workspace } = retryCtx;
  await retryCtx.origin?.close();
  retryCtx.origin = null;
  const failing = await startReceiver(() => 503);
  let offset = 0;
  const origin = await startTestOrigin(workspace, {
    storage: undefined,
    storageDir: workspace.storageDir,
    webhookRetryBaseMs: 100,
    webhookTimeoutMs: 1000,
    now: () => Date.now() + offset,
  });
  try {
    const hook = await depotJson(['webhook', 'add', `${failing.url}/down`], workspace);
    const storage = createFileStorage(workspace.storageDir);
    const delivery = await webhookStore(storage).enqueue(hook.id, { event: 'ping', webhookId: hook.id }, Date.now());
    await until(() => failing.received.length >= 3, 'three failed attempts');
    const [pending] = (await listed(workspace)).filter((h) => h.id === hook.id);
    assert.equal([pending!.pending, pending!.lastOutcome?.state, pending!.lastOutcome?.status], [1, 'pending', 503]);
    offset = DELIVERY_WINDOW_MS + 60_000;
    await until(
      async () => (await webhookStore(storage).deliveries(hook.id)).finished.length === 1,
      'given up after 24 hours',
    );
    const sent = failing.received.length;
    const [failed] = (await listed(workspace)).filter((h) => h.id === hook.id);
    assert.is(failed!.pending, 0);
    assert.equal([failed!.deliveries[0]!.delivery, failed!.deliveries[0]!.state], [delivery.id, 'failed']);
    assert.is(failed!.lastOutcome?.state, 'failed');
    assert.match(String(failed!.lastOutcome?.error), /older than 24 hours/);
    await new Promise((r) => setTimeout(r, 400));
    assert.is(failing.received.length, sent, 'no attempt after it was given up');
    await storage.dispose();
  } finally {
    await origin.close();
    await failing.stop();
  }
});
retries('a release is announced only by an origin whose served tree holds the version', async () => {
  const { workspace } = retryCtx;
  const receiver = await startReceiver(() => 200);
  const origin = await startTestOrigin(workspace, {
    storage: undefined,
    storageDir: workspace.storageDir,
    webhookRetryBaseMs: 100,
  });
  try {
    const hook = await depotJson(['webhook', 'add', `${receiver.url}/early`], workspace);
    const storage = createFileStorage(workspace.storageDir);
    // A version the tree does not have yet, as when CI's release reaches the outbox before its rsync.
    await webhookStore(storage).enqueue(hook.id, { event: 'release', version: SAMPLE_VERSION }, Date.now());
    await storage.dispose();
    await new Promise((r) => setTimeout(r, 1500));
    assert.is(receiver.received.length, 0, 'not announced before it is served');
    const [waiting] = (await listed(workspace)).filter((h) => h.id === hook.id);
    assert.equal([waiting!.pending, waiting!.lastOutcome], [1, null]);
    await depotJson(['webhook', 'remove', hook.id], workspace);
  } finally {
    await origin.close();
    await receiver.stop();
  }
});
retries(
  "a release's announcements are written before its record: a release whose build fails is announced once a later build serves it",
  async () => {
    const workspace = await makeWorkspace();
    const receiver = await startReceiver(() => 200);
    const origin = await startTestOrigin(workspace, {
      storage: undefined,
      storageDir: workspace.storageDir,
      webhookRetryBaseMs: 100,
    });
    try {
      await depotJson(['webhook', 'add', `${receiver.url}/later`], workspace);
      // The build cannot stage its tree (dist/trees is a file): it fails after data/ holds the record.
      const trees = join(workspace.distDir, 'trees');
      await rename(trees, `${trees}.aside`);
      await writeFile(trees, '');
      const jar = join(workspace.dir, 'Later-3.0.0.jar');
      await writeFile(jar, pluginJar('later-3.0.0'));
      const release = await runDepot(
        ['release', jar, '--version', '3.0.0', '--java', '21', '--software', 'PaperMC'],
        workspace,
      );
      assert.is.not(release.code, 0, 'the build failed');
      assert.match(release.stderr, /ENOTDIR/);
      await rm(trees);
      await rename(`${trees}.aside`, trees);
      await new Promise((r) => setTimeout(r, 1000));
      assert.is(receiver.received.length, 0, 'not announced while not served');
      const [waiting] = await listed(workspace);
      assert.is(waiting!.pending, 1, 'the delivery waits in the outbox');

      const build = await runBuildCommand(workspace);
      assert.is(build.code, 0, build.stderr);
      await until(() => receiver.succeeded.length === 1, 'announced once served');
      const body = JSON.parse(receiver.received[0]!.body) as { event: string; version: PluginVersion };
      assert.equal([body.event, body.version.pluginVersion], ['release', '3.0.0']);
      const served = (await (await fetch(`${origin.url}/api/plugin-versions/latest/papermc/21`)).json()) as {
        version: PluginVersion;
      };
      assert.equal(body.version, served.version, 'the version object the new tree serves');
    } finally {
      await origin.close();
      await receiver.stop();
      await workspace.remove();
    }
  },
);
retries.run();

const crash = suite('kill -9 of the origin mid-delivery');
const crashCtx = {} as { workspace: Workspace; origin: OriginProcess | null; receiver: Receiver };
crash.before(async () => {
  crashCtx.workspace = await makeWorkspace();
  crashCtx.origin = null;
});
crash.after(async () => {
  if (crashCtx.origin && crashCtx.origin.child.exitCode === null) {
    crashCtx.origin.child.kill('SIGTERM');
    await crashCtx.origin.exited;
  }
  await crashCtx.receiver?.stop();
  await crashCtx.workspace.remove();
});

crash(
  'a delivery whose origin died before the receiver answered is sent again after restart, with the same id',
  async () => {
    const { workspace } = crashCtx;
    // The first request is held unanswered; the test kills the origin meanwhile. Later ones get 200.
    crashCtx.receiver = await startReceiver((_request, earlier) => (earlier.length === 0 ? 'hang' : 200));
    const hook = await depotJson(['webhook', 'add', `${crashCtx.receiver.url}/hook`], workspace);
    const storage = createFileStorage(workspace.storageDir);
    const delivery = await webhookStore(storage).enqueue(hook.id, { event: 'ping', webhookId: hook.id }, Date.now());
    await storage.dispose();
    const env = { LOG_REQUESTS: 'off', RATE_LIMIT: '0', WEBHOOK_RETRY_BASE_MS: '200' };
    crashCtx.origin = await spawnOrigin(workspace, env);
    await until(() => crashCtx.receiver.received.length === 1, 'the first attempt reached the receiver');
    crashCtx.origin.child.kill('SIGKILL');
    await crashCtx.origin.exited;
    assert.equal(crashCtx.receiver.succeeded, []);
    assert.is((await listed(workspace))[0]!.pending, 1, 'still in the outbox after the kill');

    crashCtx.origin = await spawnOrigin(workspace, env);
    await until(() => crashCtx.receiver.succeeded.length === 1, 'delivered after the restart');
    assert.equal(
      crashCtx.receiver.received.map((r) => r.headers['x-depot-delivery']),
      [delivery.id, delivery.id],
      'the same delivery id before and after the crash',
    );
    assert.equal(crashCtx.receiver.received[0]!.body, crashCtx.receiver.received[1]!.body);
    const [after] = await listed(workspace);
    assert.equal(
      [after!.pending, after!.lastOutcome?.state, after!.lastOutcome?.delivery],
      [0, 'delivered', delivery.id],
    );
    await new Promise((r) => setTimeout(r, 500));
    assert.is(crashCtx.receiver.received.length, 2, 'nothing more is sent once it was delivered');
  },
);
crash.run();

const REDIS = findProgram('redis-server');
if (!REDIS)
  console.warn(
    'webhooks.test.ts: redis-server not installed, the two-origin test not run (apt-get install -y redis-server; .ci/run does)',
  );
else {
  const shared = suite('two origins on one Redis');
  const ctx = {} as {
    workspace: Workspace;
    redis: RedisServer;
    origins: RunningOrigin[];
    state: StateStore;
    receiver: Receiver;
  };
  shared.before(async () => {
    ctx.workspace = await makeWorkspace();
    ctx.redis = await startRedis(REDIS);
    ctx.state = createRedisStorage(ctx.redis.url);
    assert.ok(await redisReady(ctx.state.redis!, 5000));
    ctx.origins = [];
  });
  shared.after(async () => {
    for (const origin of ctx.origins) await origin.close();
    await ctx.state.redis?.quit();
    await ctx.receiver?.stop();
    await ctx.redis.stop();
    await ctx.workspace.remove();
  });

  shared(
    'each attempt of each delivery reaches the receiver once: no double delivery from the two origins',
    async () => {
      // Every delivery's first attempt gets a 503, its second a 200; answers take 100 ms so that both origins overlap.
      ctx.receiver = await startReceiver(
        (request, earlier) =>
          earlier.some((e) => e.headers['x-depot-delivery'] === request.headers['x-depot-delivery']) ? 200 : 503,
        100,
      );
      const env = { REDIS_URL: ctx.redis.url };
      const hook = await depotJson(['webhook', 'add', `${ctx.receiver.url}/hook`], ctx.workspace, env);
      const store = webhookStore(ctx.state.storage, ctx.state.redis);
      const options = { redisUrl: ctx.redis.url, webhookRetryBaseMs: 100, webhookTimeoutMs: 2000 };
      ctx.origins.push(await startTestOrigin(ctx.workspace, options), await startTestOrigin(ctx.workspace, options));
      const ids: string[] = [];
      for (let i = 0; i < 12; i++)
        ids.push((await store.enqueue(hook.id, { event: 'ping', webhookId: hook.id }, Date.now())).id);
      await until(() => ctx.receiver.succeeded.length >= ids.length, 'every delivery answered 200', 30_000);
      await new Promise((r) => setTimeout(r, 500));
      for (const id of ids) {
        const requests = ctx.receiver.received.filter((r) => r.headers['x-depot-delivery'] === id);
        assert.is(requests.length, 2, `${id}: one 503 attempt and one 200 attempt`);
      }
      assert.equal([...ctx.receiver.succeeded].sort(), [...ids].sort(), 'each delivery succeeded exactly once');
      const [listedHook] = await listed(ctx.workspace, env);
      assert.is(listedHook!.pending, 0);
      assert.is(listedHook!.deliveries.length, ids.length);
      assert.ok(listedHook!.deliveries.every((d) => d.state === 'delivered' && d.attempts === 2));
      assert.equal(await ctx.state.redis!.keys('depot:webhook-lease:*'), [], 'every lease let go');
      assert.equal(await ctx.state.redis!.keys('depot:webhook-outbox:*'), [], 'the outbox is empty');
    },
  );
  shared.run();
}
