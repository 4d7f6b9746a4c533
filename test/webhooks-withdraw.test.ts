import { execFile } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { enqueueWebhooks } from '../build/changes/announce.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { createCatalog, loadCatalog, versionsDir } from '../server/versions/catalog.ts';
import { presentVersion } from '../server/versions/present.ts';
import type { PluginVersion, Withdrawal } from '../server/versions/schema.ts';
import { WITHDRAW_COLOUR } from '../server/webhooks/payload.ts';
import {
  ROOT,
  buildApi,
  makeWorkspace,
  runDepot,
  snapshotFiles,
  startTestOrigin,
  until,
  workspaceEnv,
  type CliResult,
  type Workspace,
} from './helpers.ts';
import { startReceiver, type Received, type Receiver } from './webhook-receiver.ts';

// Issue 29: a withdraw is announced, through the outbox, to the webhooks subscribed to `withdraw`,
// by an origin once the tree it serves shows the version withdrawn.

const REASON = 'Corrupts worlds on load ]]> see <b>#42</b> & "$HOME" @everyone';

/** `npm run --silent depot -- <args>`, as an operator types it. */
function npmDepot(args: string[], workspace: Workspace): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      'npm',
      ['run', '--silent', 'depot', '--', ...args],
      { cwd: ROOT, env: workspaceEnv(workspace), timeout: 120_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function addWebhook(workspace: Workspace, args: string[]): Promise<{ id: string; secret: string }> {
  const result = await runDepot(['webhook', 'add', ...args], workspace);
  assert.is(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

function signatureHolds(secret: string, request: Received): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(request.body).digest('hex')}`);
  const given = Buffer.from(String(request.headers['x-depot-signature-256'] ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const withdraw = suite('a withdraw reaches the webhooks subscribed to it once an origin serves it');
const ctx = {} as {
  workspace: Workspace;
  origin: RunningOrigin;
  bothReceiver: Receiver;
  releaseOnly: Receiver;
  discord: Receiver;
  /** The webhook on release,withdraw, as `webhook add` printed it. */
  both: { id: string; secret: string };
};
withdraw.before(async () => {
  ctx.workspace = await makeWorkspace();
  [ctx.bothReceiver, ctx.releaseOnly, ctx.discord] = await Promise.all([
    startReceiver(),
    startReceiver(),
    startReceiver(() => 204),
  ]);
});
withdraw.after(async () => {
  await ctx.origin?.close();
  await Promise.all([ctx.bothReceiver, ctx.releaseOnly, ctx.discord].map((r) => r?.stop()));
  await ctx.workspace.remove();
});

withdraw('--events takes release,withdraw and refuses another event, writing nothing', async () => {
  const { workspace } = ctx;
  const refused = await npmDepot(
    ['webhook', 'add', `${ctx.bothReceiver.url}/hook`, '--events', 'release,yank'],
    workspace,
  );
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /--events: must be release or withdraw, or both: release,withdraw/);
  assert.equal(await snapshotFiles(workspace.storageDir).catch(() => ({})), {}, 'nothing written');
  const added = await npmDepot(
    ['webhook', 'add', `${ctx.bothReceiver.url}/hook`, '--events', 'release,withdraw'],
    workspace,
  );
  assert.is(added.code, 0, added.stderr);
  ctx.both = JSON.parse(added.stdout);
  assert.equal(JSON.parse(added.stdout).events, ['release', 'withdraw']);
  const plain = await addWebhook(workspace, [`${ctx.releaseOnly.url}/hook`]);
  assert.equal((plain as unknown as { events: string[] }).events, ['release'], 'the default stays release alone');
});

withdraw(
  'json: {event, version, reason} signed, the version as the API serves it; Discord: amber; release-only: nothing',
  async () => {
    const { workspace } = ctx;
    await addWebhook(workspace, [`${ctx.discord.url}/api/webhooks/1/x`, '--format', 'discord', '--events', 'withdraw']);
    ctx.origin = await startTestOrigin(workspace, {
      storage: undefined,
      storageDir: workspace.storageDir,
      publicUrl: 'https://depot.example.org',
      webhookRetryBaseMs: 100,
    });

    // The withdraw as the command will make it: its announcement first, with the version object as
    // the changed catalog presents it; then its record, then the build.
    const catalog = await loadCatalog(workspace.dataDir);
    const target = catalog.versions.find((v) => v.serverSoftware.includes('PaperMC') && v.channel !== 'beta')!;
    const withdrawal: Withdrawal = { reason: REASON, at: new Date().toISOString(), by: 'tester' };
    const next = createCatalog(
      catalog.versions.map((v) => (v.id === target.id ? { ...v, withdrawn: withdrawal } : v)),
      [...catalog.users.values()],
    );
    const version = presentVersion(next, next.byId.get(target.id)!, true);
    const config = { storageDir: workspace.storageDir };
    const announced = await enqueueWebhooks(config, { event: 'withdraw', version, reason: REASON }, Date.now());
    assert.is(announced.told, 2, 'the webhook on release,withdraw and the Discord one on withdraw');

    await new Promise((r) => setTimeout(r, 1500));
    assert.is(
      ctx.bothReceiver.received.length + ctx.discord.received.length,
      0,
      'not sent while the tree shows it unwithdrawn',
    );

    const { sha512: _sha512, changelog: _changelog, ...record } = target;
    await writeFile(
      join(versionsDir(workspace.dataDir), `${target.id}.json`),
      `${JSON.stringify({ ...record, withdrawn: withdrawal }, null, 2)}\n`,
    );
    await buildApi(workspace);
    await until(() => ctx.bothReceiver.succeeded.length === 1 && ctx.discord.succeeded.length === 1, 'both delivered');

    const [request] = ctx.bothReceiver.received;
    assert.is(request!.headers['x-depot-event'], 'withdraw');
    assert.ok(signatureHolds(ctx.both.secret, request!), 'signed with the secret add printed, as releases are');
    const body = JSON.parse(request!.body) as { event: string; version: PluginVersion; reason: string };
    assert.equal(Object.keys(body), ['event', 'version', 'reason']);
    assert.equal([body.event, body.reason], ['withdraw', REASON]);
    const served = (await (await fetch(`${ctx.origin.url}/api/plugin-versions`)).json()) as {
      versions: PluginVersion[];
    };
    assert.equal(
      body.version,
      served.versions.find((v) => v.id === target.id),
      'the version object the API serves',
    );
    assert.equal(body.version.withdrawn, withdrawal);

    const message = JSON.parse(ctx.discord.received[0]!.body);
    const [embed] = message.embeds;
    assert.is(embed.color, WITHDRAW_COLOUR);
    assert.is(WITHDRAW_COLOUR, 0xf59e0b, 'amber');
    assert.is(embed.title, `Version ${target.pluginVersion} withdrawn`);
    assert.ok(embed.description.startsWith(`Withdrawn: ${REASON}\n`), embed.description);
    assert.is(embed.url, `https://depot.example.org/version/${target.id}`);
    assert.is(embed.timestamp, withdrawal.at);
    assert.is(message.content, undefined, 'no message text, where a mention would notify');

    await new Promise((r) => setTimeout(r, 500));
    assert.is(ctx.releaseOnly.received.length, 0, 'a webhook subscribed to release alone gets no withdraw');
    assert.is(ctx.bothReceiver.received.length, 1);
  },
);

withdraw('npm run depot -- withdraw announces through the same outbox; restore announces nothing', async () => {
  const { workspace } = ctx;
  const catalog = await loadCatalog(workspace.dataDir);
  const target = catalog.versions.find((v) => v.serverSoftware.includes('Velocity'))!;
  const result = await npmDepot(['withdraw', target.id, '--reason', 'breaks proxies', '--by', 'tester2'], workspace);
  assert.is(result.code, 0, result.stderr);
  assert.match(result.stderr, /\[webhooks\] 2 deliveries written to the outbox/);
  await until(() => ctx.bothReceiver.succeeded.length === 2 && ctx.discord.succeeded.length === 2, 'delivered');
  const body = JSON.parse(ctx.bothReceiver.received[1]!.body) as {
    event: string;
    version: PluginVersion;
    reason: string;
  };
  assert.equal([body.event, body.reason, body.version.id], ['withdraw', 'breaks proxies', target.id]);
  assert.equal(body.version.withdrawn?.by, 'tester2');
  assert.ok(signatureHolds(ctx.both.secret, ctx.bothReceiver.received[1]!));
  const restored = await npmDepot(['restore', target.id], workspace);
  assert.is(restored.code, 0, restored.stderr);
  await new Promise((r) => setTimeout(r, 500));
  assert.is(ctx.bothReceiver.received.length, 2, 'a restore is no event');
  assert.is(ctx.releaseOnly.received.length, 0, 'a webhook subscribed to release alone gets no withdraw');
});

withdraw('a reason the character rule refuses is refused before anything reaches the outbox', async () => {
  const { workspace } = ctx;
  const catalog = await loadCatalog(workspace.dataDir);
  const version = presentVersion(catalog, catalog.versions[0]!, true);
  const before = await snapshotFiles(workspace.storageDir);
  const error = await enqueueWebhooks(
    { storageDir: workspace.storageDir },
    { event: 'withdraw', version, reason: 'bad\u0007bell' },
    Date.now(),
  ).catch((e: unknown) => e as Error);
  assert.match(String((error as Error).message), /^nothing was withdrawn: reason: /);
  assert.equal(await snapshotFiles(workspace.storageDir), before);
});
withdraw.run();
