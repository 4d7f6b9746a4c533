import { chmod, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { redactUrl } from '../server/redis.ts';
import { createFileStorage, withKeyLock } from '../server/storage.ts';
import { shownWebhookUrl } from '../server/webhooks/shown-url.ts';
import {
  makeWorkspace,
  pluginJar,
  runDepot,
  spawnOrigin,
  until,
  type OriginProcess,
  type Workspace,
} from './helpers.ts';
import { startReceiver } from './webhook-receiver.ts';

// Secrets and what shows them: STORAGE_DIR (the chart-URL key, webhooks' secrets) is its owner's
// alone, `webhook list` shows a URL's shape and never its tokens, and REDIS_URL's password stays
// out of every log line.

/**
 * Every folder and file under `dir` (itself included), with its permission bits. A file or folder
 * gone between its folder's listing and its own (a download journal's lock, held for a moment by a
 * running origin) is left out: it existed only while its writer held it.
 */
async function modesUnder(dir: string): Promise<{ path: string; folder: boolean; mode: number }[]> {
  const found = [{ path: dir, folder: true, mode: (await stat(dir)).mode & 0o777 }];
  const gone = (error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  };
  const visit = async (folder: string) => {
    for (const entry of (await readdir(folder, { withFileTypes: true }).catch(gone)) ?? []) {
      const path = join(folder, entry.name);
      const info = await stat(path).catch(gone);
      if (!info) continue;
      found.push({ path, folder: info.isDirectory(), mode: info.mode & 0o777 });
      if (info.isDirectory()) await visit(path);
    }
  };
  await visit(dir);
  return found;
}

const octal = (mode: number) => mode.toString(8).padStart(4, '0');
const EXPOSED = /STORAGE_DIR .* is open to other local users/;

const storage = suite('STORAGE_DIR is for its owner alone');
const ctx = {} as { workspace: Workspace; origin: OriginProcess | null };
storage.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.origin = null;
});
storage.after(async () => {
  if (ctx.origin && ctx.origin.child.exitCode === null) {
    ctx.origin.child.kill('SIGTERM');
    await ctx.origin.exited;
  }
  await ctx.workspace.remove();
});

const depot = async (args: string[]) => {
  const result = await runDepot(args, ctx.workspace);
  assert.is(result.code, 0, `depot ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout);
};

storage("a record's lock folder is its owner's alone for as long as it is held", async () => {
  const dir = join(ctx.workspace.dir, 'locks');
  await mkdir(dir, { mode: 0o700 });
  const store = createFileStorage(dir);
  // proper-lockfile makes the folder beside the record; its own mkdir would take the default 0755.
  const mode = await withKeyLock(store, 'downloads:journal:20789', async () =>
    octal((await stat(join(dir, 'downloads', 'journal', '20789.lock'))).mode & 0o777),
  );
  assert.is(mode, '0700');
});

storage('the CLI and an origin make a fresh STORAGE_DIR 0700 and every record in it 0600', async () => {
  const { workspace } = ctx;
  const receiver = await startReceiver();
  try {
    // Each writer of secrets, as an operator runs them: a webhook and its secret, a user's token,
    // a private server's ingest key, the generated chart-URL key; then an origin delivering,
    // ingesting and caching a chart.
    const hook = await depot(['webhook', 'add', `${receiver.url}/hook`]);
    await depot(['user', 'add', 'olivia']);
    const server = await depot(['server', 'add', '--owner', 'olivia', '--private']);
    const signed = await depot(['chart-url', server.id, '--days', '7']);
    await depot(['stats', 'add', server.id, '12']);
    ctx.origin = await spawnOrigin(workspace, { LOG_REQUESTS: 'off', RATE_LIMIT: '0', WEBHOOK_RETRY_BASE_MS: '200' });
    const ingest = await fetch(`${ctx.origin.url}/api/servers/${server.id}/stats`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.ingestKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ players: 7 }),
    });
    assert.is(ingest.status, 204, await ingest.text());
    const chart = await fetch(new URL(new URL(signed.url).pathname + new URL(signed.url).search, ctx.origin.url));
    assert.is(chart.status, 200, 'the signed chart URL answers');
    await depot(['webhook', 'test', hook.id]);
    await until(() => receiver.succeeded.length === 1, 'the ping delivered');
    // A counted download: its day's journal is appended in place, not written through the store.
    const jar = await fetch(`${ctx.origin.url}/api/plugin-versions/download/latest/papermc`);
    assert.is(jar.status, 200);
    await jar.arrayBuffer();
    const journaled = async () =>
      (await modesUnder(workspace.storageDir)).some(({ path }) => path.includes('/downloads/journal/'));
    await until(journaled, 'the download journaled');

    const found = await modesUnder(workspace.storageDir);
    const names = found.map((f) => f.path.slice(workspace.storageDir.length));
    for (const expected of ['/chart-url-key', `/webhooks/${hook.id}`, `/servers/${server.id}`])
      assert.ok(names.includes(expected), `${expected} was written (${names.join(', ')})`);
    assert.ok(
      names.some((name) => name.startsWith('/cache/')),
      'a render cache was written',
    );
    for (const { path, folder, mode } of found)
      assert.is(octal(mode), folder ? '0700' : '0600', `${path} is its owner's alone`);
    assert.not.match(ctx.origin.stdout.join('\n'), EXPOSED, 'no warning for a private STORAGE_DIR');
  } finally {
    if (ctx.origin) {
      ctx.origin.child.kill('SIGTERM');
      await ctx.origin.exited;
      ctx.origin = null;
    }
    await receiver.stop();
  }
});

storage('an origin warns once at start when STORAGE_DIR is open to others, and says how to fix it', async () => {
  const { workspace } = ctx;
  const storageDir = join(workspace.dir, 'storage-of-an-older-depot');
  await mkdir(storageDir);
  await writeFile(join(storageDir, 'chart-url-key'), 'k'.repeat(43), { mode: 0o644 });
  await chmod(storageDir, 0o755);
  for (const [mode, warned] of [
    [0o755, true],
    [0o711, true],
    [0o700, false],
  ] as const) {
    await chmod(storageDir, mode);
    const origin = await spawnOrigin({ ...workspace, storageDir }, { LOG_REQUESTS: 'off', RATE_LIMIT: '0' });
    try {
      // A request answered: start-up (where the check runs) is over.
      assert.is((await fetch(`${origin.url}/healthz`)).status, 200);
      const warnings = origin.stdout.filter((line) => EXPOSED.test(line));
      assert.is(warnings.length, warned ? 1 : 0, `mode ${octal(mode)}: ${warnings.join('\n')}`);
      if (warned) {
        assert.match(warnings[0]!, new RegExp(`mode ${octal(mode)}`));
        assert.match(warnings[0]!, /chart-URL key and webhook secrets/);
        assert.ok(warnings[0]!.includes(`chmod -R go= ${storageDir}`), 'says how to fix it');
      }
    } finally {
      origin.child.kill('SIGTERM');
      await origin.exited;
    }
  }
  // An existing folder is the operator's: warned about, never changed behind their back.
  assert.is(octal((await stat(storageDir)).mode & 0o777), '0700');
});

storage(
  'a release on a fresh STORAGE_DIR writes its outbox entries 0600 (the release path writes there too)',
  async () => {
    const workspace = await makeWorkspace({ build: false });
    try {
      const hook = await runDepot(['webhook', 'add', 'http://127.0.0.1:9/hook'], workspace);
      assert.is(hook.code, 0, hook.stderr);
      const jar = join(workspace.dir, 'Mode-1.0.0.jar');
      await writeFile(jar, pluginJar('mode-1.0.0'));
      const release = await runDepot(
        ['release', jar, '--version', '1.0.0', '--java', '21', '--software', 'PaperMC'],
        workspace,
      );
      assert.is(release.code, 0, release.stderr);
      const found = await modesUnder(workspace.storageDir);
      assert.ok(
        found.some((f) => f.path.includes('webhook-outbox')),
        'an outbox entry was written',
      );
      for (const { path, folder, mode } of found) assert.is(octal(mode), folder ? '0700' : '0600', path);
      // data/ stays readable: it is what the build publishes.
      const record = (await readdir(join(workspace.dataDir, 'versions'))).find((name) => name.endsWith('.json'))!;
      assert.is(octal((await stat(join(workspace.dataDir, 'versions', record))).mode & 0o044), '0044');
    } finally {
      await workspace.remove();
    }
  },
);
storage.run();

// ---------------------------------------------------------------------------------------------

const shown = suite('webhook list shows a URL by its shape');

/** A token-like text: long enough to be a credential, from the URL-safe alphabet providers use. */
const token = (min = 8) =>
  fc.stringMatching(new RegExp(`^[A-Za-z0-9_-]{${min},80}$`)).filter((t) => /[A-Z0-9_-]/.test(t));
const snowflake = fc.bigInt({ min: 10n ** 16n, max: 10n ** 19n }).map(String);
const HOSTS = [
  'discord.com',
  'discordapp.com',
  'canary.discord.com',
  'ptb.discord.com',
  'hooks.slack.com',
  '127.0.0.1:8080',
];
/** A free-form segment or query text: anything, percent-encoded as a URL carries it. */
const anyText = fc.string({ minLength: 1, maxLength: 40, unit: 'binary' });

/** URL shapes with the secrets they carry: Discord's, Slack's, and arbitrary receivers' paths and queries. */
const shapes = fc.oneof(
  fc
    .record({
      host: fc.constantFrom(...HOSTS),
      id: snowflake,
      secret: token(60),
      v: fc.constantFrom('', '/v10', '/v9'),
    })
    .chain(({ host, id, secret, v }) =>
      fc.constantFrom('', '/slack', '/github', '?wait=true', `?thread_id=${id}`).map((tail) => ({
        url: `https://${host}/api${v}/webhooks/${id}/${secret}${tail}`,
        secrets: [id, secret],
      })),
    ),
  fc.tuple(token(9), token(9), token(24)).map(([team, bot, secret]) => ({
    url: `https://hooks.slack.com/services/${team}/${bot}/${secret}`,
    secrets: [team, bot, secret],
  })),
  fc.tuple(token(9), token(9), token(10), token(24)).map(([team, app, id, secret]) => ({
    url: `https://hooks.slack.com/workflows/${team}/${app}/${id}/${secret}`,
    secrets: [team, app, id, secret],
  })),
  fc
    .record({
      host: fc.constantFrom(...HOSTS),
      segments: fc.array(anyText, { maxLength: 6 }),
      query: fc.array(fc.tuple(fc.stringMatching(/^[a-z_]{1,12}$/), anyText), { maxLength: 4 }),
    })
    .map(({ host, segments, query }) => {
      const url = new URL(`http://${host}/`);
      url.pathname = `/${segments.map(encodeURIComponent).join('/')}`;
      for (const [name, value] of query) url.searchParams.append(name, value);
      return { url: url.href, secrets: [...segments, ...query.map(([, value]) => value)] };
    }),
);

shown('no path segment or query value longer than 3 characters shows, whatever the URL (property)', () => {
  const ROUTE =
    /^(api|webhooks|webhook|hooks|hook|services|workflows|triggers|slack|github|incoming|events|v\d{1,2}|…|)$/;
  fc.assert(
    fc.property(shapes, ({ url, secrets }) => {
      const parsed = new URL(url);
      const text = shownWebhookUrl(url);
      assert.ok(text.startsWith(`${parsed.protocol}//${parsed.host}/`), `${text}: scheme and host show`);
      const [path, query = ''] = text.slice(`${parsed.protocol}//${parsed.host}`.length).split('?');
      for (const segment of path!.split('/')) assert.match(segment, ROUTE, `${url} shows a segment ${segment}`);
      for (const pair of query ? query.split('&') : []) assert.match(pair, /^([a-z_]{1,20}|…)=…$/, `${url}: ${pair}`);
      // No token shows anywhere (one that the host happens to contain aside).
      const tokens = secrets.filter((s) => /^[A-Za-z0-9_-]{4,}$/.test(s) && /[A-Z0-9_-]/.test(s));
      for (const secret of tokens.filter((s) => !parsed.host.includes(s)))
        assert.not.ok(text.includes(secret), `${url} shows ${secret} in ${text}`);
    }),
    { numRuns: 500 },
  );
});

shown('Discord and Slack URLs, as list shows them', () => {
  const cases: [string, string][] = [
    ['https://discord.com/api/webhooks/123456789012345678/AbCdEf_token-Value', 'https://discord.com/api/webhooks/…/…'],
    [
      'https://discord.com/api/webhooks/123456789012345678/AbCdEf_token/slack',
      'https://discord.com/api/webhooks/…/…/slack',
    ],
    [
      'https://discord.com/api/v10/webhooks/1234/AbCd?wait=true&thread_id=42',
      'https://discord.com/api/v10/webhooks/…/…?wait=…&thread_id=…',
    ],
    ['https://hooks.slack.com/services/T0001/B0001/XXXXXXXXXXXXXXXXXXXXXXXX', 'https://hooks.slack.com/services/…/…/…'],
    ['http://127.0.0.1:8080/hook', 'http://127.0.0.1:8080/hook'],
    ['https://example.org/receive?key=s3cr3t&ApiKey=s3cr3t', 'https://example.org/…?key=…&…=…'],
  ];
  for (const [url, expected] of cases) assert.is(shownWebhookUrl(url), expected, url);
});
shown.run();

// ---------------------------------------------------------------------------------------------

const redact = suite('redactUrl: REDIS_URL in log lines');

redact('user name and password are replaced wherever the URL parser ends them, `@` in the password too', () => {
  const cases: [string, string][] = [
    ['redis://user:p@ss@word@host:6379', 'redis://***:***@host:6379'],
    ['redis://:secret@127.0.0.1:6379/0', 'redis://:***@127.0.0.1:6379/0'],
    ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379'],
    ['rediss://default:p%40ss@redis.example.org:6380/2', 'rediss://***:***@redis.example.org:6380/2'],
    ['redis://127.0.0.1:6379/0?password=s3cret', 'redis://127.0.0.1:6379/0?password=***'],
    ['redis://user:1234/rest@host:6379', 'redis://***'],
    ['redis://:pass word@host', 'redis://:***@host'],
  ];
  for (const [url, expected] of cases) assert.is(redactUrl(url), expected, url);
});

redact('no password shows, whatever characters it holds (property)', () => {
  const SHAPES = new Set(['redis://***:***@127.0.0.1:6379/0', 'redis://:***@127.0.0.1:6379/0', 'redis://***']);
  const text = fc.string({ minLength: 1, maxLength: 30, unit: fc.constantFrom(...'ab9Z@:/?#%. \\[]') });
  fc.assert(
    fc.property(fc.option(text, { nil: '' }), text, (user, password) => {
      const shown = redactUrl(`redis://${user}:${password}@127.0.0.1:6379/0`);
      assert.ok(SHAPES.has(shown), `user ${JSON.stringify(user)} password ${JSON.stringify(password)}: ${shown}`);
    }),
    { numRuns: 1000 },
  );
});
redact.run();
