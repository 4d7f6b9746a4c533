import { readFile, stat, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AuditRecord } from '../server/audit/schema.ts';
import { auditStore } from '../server/audit/store.ts';
import { DAY } from '../server/helpers/duration.ts';
import { hashSecret } from '../server/http/auth.ts';
import { redisReady } from '../server/redis.ts';
import { createFileStorage, createRedisStorage } from '../server/storage.ts';
import {
  findProgram,
  makeWorkspace,
  pluginJar,
  runDepot,
  snapshotFiles,
  startRedis,
  type RedisServer,
  type Workspace,
} from './helpers.ts';
import { NO_LOG } from '../server/helpers/log.ts';

// Issue 29 item 6: every change the CLI makes appends one record (time, action, target, actor,
// what changed) to the audit log of the state store, and never a secret the commands printed or
// were given. Run as an operator runs the commands, against the embedded store and a real Redis.

const OS_USER = userInfo().username;
/** A Discord-style webhook URL: its id and token path segments and its query value are credentials. */
const HOOK_ID = '112233445566778899';
const HOOK_TOKEN = 'Zq3xXw9-hookPathToken-kP0aLmB7sVt2';
const HOOK_KEY = 'queryKey-5e1f0c2b9a';
const HOOK_URL = `https://discord.com/api/webhooks/${HOOK_ID}/${HOOK_TOKEN}?wait=true&key=${HOOK_KEY}`;

type Ran = { secrets: string[]; expected: Pick<AuditRecord, 'action' | 'target' | 'actor'>[] };

const depotIn = (workspace: Workspace, env: Record<string, string>) => async (args: string[]) => {
  const result = await runDepot(args, workspace, env);
  assert.is(result.code, 0, `depot ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout);
};

/** A refused command: exit 1, one line on stderr naming `option`, and no audit record. */
async function assertRefused(workspace: Workspace, env: Record<string, string>, args: string[], option: RegExp) {
  const result = await runDepot(args, workspace, env);
  assert.is(result.code, 1, `depot ${args.join(' ')} should be refused`);
  assert.match(result.stderr.trim(), option);
  assert.is(result.stderr.trim().split('\n').length, 1, result.stderr);
}

/** Every change the CLI makes today, by three people and the OS user, with refusals between them. */
async function makeChanges(workspace: Workspace, env: Record<string, string>): Promise<Ran> {
  const depot = depotIn(workspace, env);
  const user = await depot(['user', 'add', 'olivia', '--nickname', 'Olivia Ø', '--by', 'alice']);
  await assertRefused(workspace, env, ['user', 'add', 'olivia', '--by', 'alice'], /user olivia exists already/);
  await assertRefused(workspace, env, ['user', 'add', 'mallory', '--by', ''], /--by: must be 1 to 64 characters/);
  const server = await depot(['server', 'add', '--owner', 'olivia', '--private', '--name', 'Olivia SMP']);
  const hook = await depot(['webhook', 'add', HOOK_URL, '--format', 'discord', '--by', 'bob']);
  await assertRefused(workspace, env, ['webhook', 'add', 'ftp://example.com/x', '--by', 'bob'], /^depot webhook: url:/);
  const jar = join(workspace.dir, 'Audited-9.1.0.jar');
  await writeFile(jar, pluginJar('9.1.0'));
  const release = ['release', jar, '--version', '9.1.0', '--java', '21', '--software', 'PaperMC', '--by', 'carol'];
  const version = await depot(release);
  await assertRefused(workspace, env, release, /already released/);
  await depot(['webhook', 'remove', hook.id, '--by', 'bob']);
  await assertRefused(workspace, env, ['webhook', 'remove', hook.id], /no webhook with id/);
  return {
    secrets: [user.token, hashSecret(user.token), server.ingestKey, hashSecret(server.ingestKey), hook.secret]
      .concat([HOOK_ID, HOOK_TOKEN, HOOK_KEY, hook.url])
      .concat([user.token.slice(4), server.ingestKey.slice(4), hook.secret.slice(4)]),
    expected: [
      { action: 'user add', target: 'olivia', actor: 'alice' },
      { action: 'server add', target: server.id, actor: OS_USER },
      { action: 'webhook add', target: hook.id, actor: 'bob' },
      { action: 'release', target: version.id, actor: 'carol' },
      { action: 'webhook remove', target: hook.id, actor: 'bob' },
    ],
  };
}

/** `depot audit` with `args`: the records it printed, one JSON line each. */
async function printed(workspace: Workspace, env: Record<string, string>, args: string[] = []) {
  const result = await runDepot(['audit', ...args], workspace, env);
  assert.is(result.code, 0, result.stderr);
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditRecord);
}

/** What every backend must show after makeChanges: the records in order, with what changed and no secret. */
function assertRecorded(records: AuditRecord[], ran: Ran, stored: string) {
  assert.equal(
    records.map(({ action, target, actor }) => ({ action, target, actor })),
    ran.expected,
  );
  for (const record of records) assert.ok(Math.abs(Date.parse(record.at) - Date.now()) < 10 * 60_000, record.at);
  const [user, server, added, release] = records;
  assert.equal(user!.changes, { id: user!.changes.id, nickname: 'Olivia Ø' });
  assert.equal(server!.changes, { owner: 'olivia', private: true, name: 'Olivia SMP' });
  assert.equal(added!.changes, {
    url: 'https://discord.com/api/webhooks/…/…?wait=…&key=…',
    format: 'discord',
    events: ['release'],
  });
  assert.is(release!.changes.pluginVersion, '9.1.0');
  assert.is(release!.changes.createdBy, 'carol');
  for (const secret of ran.secrets) assert.not.ok(stored.includes(secret), `the audit log holds a secret: ${secret}`);
}

const files = suite('audit log: the embedded store');
const ctx = {} as { workspace: Workspace; ran: Ran };
files.before(async () => {
  ctx.workspace = await makeWorkspace();
});
files.after(() => ctx.workspace.remove());

files(
  'every change is one record in STORAGE_DIR/audit.jsonl, without a secret; `depot audit` prints them',
  async () => {
    const { workspace } = ctx;
    ctx.ran = await makeChanges(workspace, {});
    const path = join(workspace.storageDir, 'audit.jsonl');
    assert.is((await stat(path)).mode & 0o777, 0o600, 'as private as the rest of STORAGE_DIR');
    const stored = await readFile(path, 'utf8');
    assert.ok(/^[\x20-\x7e\n]*$/.test(stored), 'ASCII lines');
    const lines = stored.trimEnd().split('\n');
    assertRecorded(
      lines.map((line) => JSON.parse(line)),
      ctx.ran,
      stored,
    );
    assert.equal(await printed(workspace, {}), lines.map((line) => JSON.parse(line)) as AuditRecord[]);
  },
);

files('--target and --since pick records; newest last whatever the order they were appended in', async () => {
  const { workspace, ran } = ctx;
  const storage = createFileStorage(workspace.storageDir);
  const old = { at: new Date(Date.now() - 10 * DAY).toISOString(), action: 'user add' as const };
  await auditStore(storage).append({ ...old, target: 'olivia', actor: 'dave', changes: {} });
  await storage.dispose();
  const all = await printed(workspace, {});
  assert.is(all.length, 6);
  assert.is(all[0]!.actor, 'dave', 'the oldest first, though appended last');
  assert.equal(
    (await printed(workspace, {}, ['--since', '7d'])).map((r) => r.target),
    ran.expected.map((r) => r.target),
  );
  assert.equal(
    (await printed(workspace, {}, ['--target', 'olivia'])).map((r) => r.actor),
    ['dave', 'alice'],
  );
  assert.equal(await printed(workspace, {}, ['--since', '30d', '--target', 'nobody']), []);
});

files('bad options are refused in one line naming the option, and the log stays byte-identical', async () => {
  const { workspace } = ctx;
  const before = await snapshotFiles(workspace.storageDir);
  for (const [args, option] of [
    [['--since', '7x'], /^depot audit: --since: must be a duration such as 90m, 12h or 7d$/],
    [['--since', '0d'], /^depot audit: --since: /],
    [['--since', 'yesterday'], /^depot audit: --since: /],
    [['--target', ''], /^depot audit: --target: /],
    [['--until', '1d'], /^depot audit: .*--until/],
  ] as const)
    await assertRefused(workspace, {}, ['audit', ...args], option);
  assert.equal(await snapshotFiles(workspace.storageDir), before);
});

/** What people paste into free text: markup and CDATA ends, shell variables, controls, bidi overrides, line separators. */
const HOSTILE = [
  ']]>]]>',
  '$HOME',
  '${PATH}',
  '\u0000',
  '\u0007',
  '\r\n',
  '\u202e',
  '\u2028',
  '\ud800',
  '"}\n{"',
  '\\',
];

files('hostile text in what changed: each record stays one ASCII line and reads back as written', async () => {
  const storage = createFileStorage(join(ctx.workspace.dir, 'hostile-store'));
  const log = auditStore(storage);
  const text = fc.array(fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ unit: 'binary', maxLength: 20 })), {
    maxLength: 8,
  });
  const written: AuditRecord[] = [];
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          fc.string({ maxLength: 8 }),
          text.map((parts) => parts.join('')),
          { maxKeys: 4, noNullPrototype: true },
        ),
        async (changes) => {
          const record: AuditRecord = {
            at: new Date().toISOString(),
            action: 'server add',
            target: 't',
            actor: 'a',
            changes,
          };
          await log.append(record);
          written.push(record);
        },
      ),
      { numRuns: 100 },
    );
    const stored = await readFile(join(ctx.workspace.dir, 'hostile-store', 'audit.jsonl'), 'utf8');
    assert.ok(/^[\x20-\x7e\n]*$/.test(stored), 'printable ASCII and newlines only');
    assert.is(stored.split('\n').length - 1, written.length, 'one line a record');
    const read = await log.read();
    assert.is(read.unreadable, 0);
    assert.equal(read.records, written);
  } finally {
    await storage.dispose();
  }
});

files(
  'hostile names are refused before anything changes: --by and --name, with controls, bidi overrides or 120 KB',
  async () => {
    const { workspace } = ctx;
    const before = await snapshotFiles(workspace.storageDir);
    // About the most one argument may carry (Linux: 128 KiB a string), far past every limit.
    const huge = 'x'.repeat(120_000);
    for (const by of ['\u202eadmin', 'bob\u0007', 'a\nb', huge])
      await assertRefused(workspace, {}, ['server', 'add', '--owner', 'olivia', '--by', by], /^depot server: --by: /);
    for (const name of ['SMP\u202e', 'SMP\u0001', huge])
      await assertRefused(
        workspace,
        {},
        ['server', 'add', '--owner', 'olivia', '--name', name],
        /^depot server: --name: /,
      );
    assert.equal(await snapshotFiles(workspace.storageDir), before);
    // What the shell would expand reaches the log as written: it is data, never evaluated.
    const server = await depotIn(
      workspace,
      {},
    )(['server', 'add', '--owner', 'olivia', '--name', '$HOME ]]>', '--by', '${USER}']);
    const [record] = (await printed(workspace, {}, ['--target', server.id])) as AuditRecord[];
    assert.equal([record!.actor, record!.changes.name], ['${USER}', '$HOME ]]>']);
    // Issue 42: a --by that reads like a publishing token's record is text; only the API sets tokenId.
    const lookalike = 'bob (token tok_0123456789ab)';
    const other = await depotIn(workspace, {})(['server', 'add', '--owner', 'olivia', '--by', lookalike]);
    const [theirs] = (await printed(workspace, {}, ['--target', other.id])) as AuditRecord[];
    assert.is(theirs!.actor, lookalike);
    assert.not.ok('tokenId' in theirs!, 'no tokenId from the CLI');
  },
);

/**
 * Issue 30: a publishing token added and revoked records its id, user, name and expiry (never the
 * token or its digest); the stored log (`stored()`) holds neither, however it is written.
 */
async function assertTokenChangesRecorded(
  workspace: Workspace,
  env: Record<string, string>,
  stored: () => Promise<string>,
) {
  const depot = depotIn(workspace, env);
  const added = await depot(['token', 'add', 'olivia', '--name', 'ci', '--by', 'dave']);
  await assertRefused(workspace, env, ['token', 'add', 'olivia', '--expires', 'soon'], /^depot token: --expires: /);
  await depot(['token', 'revoke', added.id, '--by', 'erin']);
  const records = await printed(workspace, env, ['--target', added.id]);
  assert.equal(
    records.map(({ action, actor, changes }) => ({ action, actor, changes })),
    [
      {
        action: 'token add',
        actor: 'dave',
        changes: { username: 'olivia', name: 'ci', expiresAt: added.expiresAt, scopes: ['publish'], anyVersion: false },
      },
      { action: 'token revoke', actor: 'erin', changes: { username: 'olivia', name: 'ci' } },
    ],
  );
  const log = await stored();
  for (const secret of [added.token, added.token.slice(4), hashSecret(added.token)])
    assert.not.ok(log.includes(secret), `the audit log holds a secret: ${secret}`);
}

files('a publishing token added and revoked: two records naming its id, never the token or its digest', () =>
  assertTokenChangesRecorded(ctx.workspace, {}, () => readFile(join(ctx.workspace.storageDir, 'audit.jsonl'), 'utf8')),
);

const REDIS = findProgram('redis-server');
const redis = suite('audit log: Redis');
const rctx = {} as { workspace: Workspace; server: RedisServer };
redis.before(async () => {
  if (!REDIS) throw new Error('redis-server is not installed (apt-get install -y redis-server; .ci/run does)');
  rctx.workspace = await makeWorkspace();
  rctx.server = await startRedis(REDIS);
});
redis.after(async () => {
  await rctx.server?.stop();
  await rctx.workspace?.remove();
});

redis('with REDIS_URL every change is one entry of the stream depot:audit, without a secret', async () => {
  const { workspace, server } = rctx;
  const env = { REDIS_URL: server.url };
  const ran = await makeChanges(workspace, env);
  const state = createRedisStorage(server.url, NO_LOG);
  try {
    assert.ok(await redisReady(state.redis!, 5000));
    const entries = await state.redis!.xrange('depot:audit', '-', '+');
    const stored = JSON.stringify(entries);
    assertRecorded(
      entries.map(([, fields]) => JSON.parse(fields[1]!)),
      ran,
      stored,
    );
    assert.equal(
      (await printed(workspace, env)).map((r) => r.target),
      ran.expected.map((r) => r.target),
    );
  } finally {
    state.redis!.disconnect();
  }
  assert.not.ok(
    await stat(join(workspace.storageDir, 'audit.jsonl')).catch(() => null),
    'nothing in the embedded store',
  );
});

redis('with REDIS_URL a publishing token added and revoked: two entries, never the token or its digest', async () => {
  const { workspace, server } = rctx;
  const state = createRedisStorage(server.url, NO_LOG);
  try {
    assert.ok(await redisReady(state.redis!, 5000));
    await assertTokenChangesRecorded(workspace, { REDIS_URL: server.url }, async () =>
      JSON.stringify(await state.redis!.xrange('depot:audit', '-', '+')),
    );
  } finally {
    state.redis!.disconnect();
  }
});

files.run();
redis.run();
