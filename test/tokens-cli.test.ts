import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeWorkspace, runDepot, snapshotFiles, type Workspace } from './helpers.ts';

// Issue 30 item 1: `depot token add|list|revoke` as an operator types them. A refusal is exit 1
// and one line naming what to fix, with data/ and STORAGE_DIR left byte-identical.

const test = suite('depot token');
const ctx = {} as { workspace: Workspace };
test.before(async () => {
  ctx.workspace = await makeWorkspace({ build: false });
});
test.after(() => ctx.workspace.remove());

async function depot(args: string[]) {
  const result = await runDepot(args, ctx.workspace);
  assert.is(result.code, 0, `depot ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** Both folders the CLI writes, file by file. */
const snapshot = async () => ({
  data: await snapshotFiles(ctx.workspace.dataDir),
  storage: await snapshotFiles(ctx.workspace.storageDir).catch(() => ({})),
});

test('add prints the token once; list shows it without the token; revoke removes it', async () => {
  const before = Date.now();
  const added = await depot(['token', 'add', 'alice', '--name', 'ci', '--by', 'bob']);
  assert.equal(Object.keys(added), ['id', 'username', 'name', 'expiresAt', 'scopes', 'anyVersion', 'token']);
  assert.equal([added.scopes, added.anyVersion], [['publish'], false], 'POST only, its own versions, by default');
  assert.match(added.id, /^tok_[0-9a-f]{12}$/);
  assert.match(added.token, /^dpp_[A-Za-z0-9_-]{43}$/);
  assert.is(added.username, 'alice');
  assert.is(added.name, 'ci');
  const ninetyDays = Date.parse(added.expiresAt) - before;
  assert.ok(ninetyDays >= 90 * 86_400_000 && ninetyDays < 90 * 86_400_000 + 60_000, 'expires in 90 days by default');
  const forever = await depot(['token', 'add', 'bob', '--expires', 'never']);
  assert.is(forever.expiresAt, null);
  assert.is(forever.name, null);
  const short = await depot(['token', 'add', 'carol', '--expires', '12h']);
  assert.ok(Math.abs(Date.parse(short.expiresAt) - (Date.now() + 12 * 3_600_000)) < 60_000, short.expiresAt);

  const listed = await runDepot(['token', 'list'], ctx.workspace);
  assert.is(listed.code, 0, listed.stderr);
  for (const token of [added.token, forever.token, short.token])
    assert.not.ok(listed.stdout.includes(token.slice(4)), 'list never shows a token');
  assert.not.match(listed.stdout, /tokenHash|[0-9a-f]{64}/, 'nor its digest');
  const { tokens } = JSON.parse(listed.stdout);
  assert.equal(
    tokens.map((t: Record<string, unknown>) => Object.keys(t)),
    Array(3).fill(['id', 'username', 'name', 'createdAt', 'expiresAt', 'lastUsedAt', 'scopes', 'anyVersion']),
  );
  assert.equal(
    tokens.map((t: { id: string; username: string; lastUsedAt: null }) => [t.id, t.username, t.lastUsedAt]),
    [
      [added.id, 'alice', null],
      [forever.id, 'bob', null],
      [short.id, 'carol', null],
    ],
  );

  const revoked = await depot(['token', 'revoke', forever.id, '--by', 'bob']);
  assert.is(revoked.id, forever.id);
  assert.is(revoked.revoked, true);
  assert.not.ok(JSON.stringify(revoked).includes(forever.token.slice(4)));
  assert.equal(
    (await depot(['token', 'list'])).tokens.map((t: { id: string }) => t.id),
    [added.id, short.id],
  );
  const audit = await runDepot(['audit'], ctx.workspace);
  const records = audit.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.equal(records.map(({ action, target, actor }) => ({ action, target, actor })).slice(0, 1), [
    { action: 'token add', target: added.id, actor: 'bob' },
  ]);
  assert.equal(records.at(-1), {
    at: records.at(-1).at,
    action: 'token revoke',
    target: forever.id,
    actor: 'bob',
    changes: { username: 'bob', name: null },
  });
});

const REFUSALS: [string[], RegExp][] = [
  [['token', 'add', 'nobody'], /^depot token: no user "nobody"; add one with: depot user add nobody$/],
  [['token', 'add'], /^depot token: missing the username: depot token add <username>/],
  [['token', 'add', 'alice', '--expires', '90'], /^depot token: --expires: must be a duration such as 90d/],
  [['token', 'add', 'alice', '--expires', '0d'], /^depot token: --expires: must be a duration/],
  [['token', 'add', 'alice', '--expires', '3651d'], /^depot token: --expires: .*at most 3650d/],
  [['token', 'add', 'alice', '--expires', 'soon'], /^depot token: --expires: must be a duration/],
  [['token', 'add', 'alice', '--name', ''], /^depot token: --name: must be 1 to 64 characters$/],
  [['token', 'add', 'alice', '--name', 'a\u202eb'], /^depot token: --name: /],
  [['token', 'add', 'alice', '--by', ''], /^depot token: --by: must be 1 to 64 characters$/],
  [['token', 'add', 'alice', '--scope', 'x'], /^depot token: Unknown option '--scope'/],
  // Issue 41: --scopes, hostile: refused in one line that never repeats what was typed.
  ...[']]>]]>', '$var', 'publish,\u0007edit', 'publish\u202e', 'publish,,edit', '', 'x'.repeat(100_000)].map(
    (scopes): [string[], RegExp] => [
      ['token', 'add', 'alice', '--scopes', scopes],
      /^depot token: --scopes: must be a comma list of publish, edit, withdraw, e\.g\. --scopes publish,edit$/,
    ],
  ),
  [
    ['token', 'revoke', 'tok_0123456789ab'],
    /^depot token: no token with id tok_0123456789ab; see them with: depot token list$/,
  ],
  [['token', 'revoke', 'dpp_abc'], /^depot token: id must be a token id such as tok_0123456789ab$/],
  [['token', 'revoke'], /^depot token: missing the token id/],
];

test('a refusal is exit 1 and one line naming what to fix; nothing is written', async () => {
  const before = await snapshot();
  for (const [args, message] of REFUSALS) {
    const result = await runDepot(args, ctx.workspace);
    assert.is(result.code, 1, `depot ${args.join(' ')}: ${result.stdout}`);
    assert.is(result.stdout, '');
    assert.is(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.match(result.stderr.trim(), message);
  }
  assert.equal(await snapshot(), before);
});

test('the usage names the token commands', async () => {
  const result = await runDepot(['token', 'rotate'], ctx.workspace);
  assert.is(result.code, 1);
  assert.match(result.stderr, /token add <username> \[--name ci\] \[--expires 90d\|never\]/);
  assert.match(result.stderr, /token list \| token revoke <id>/);
});

test.run();
