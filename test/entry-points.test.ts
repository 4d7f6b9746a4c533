import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ROOT,
  findProgram,
  pluginJar,
  startRedis,
  workspaceEnv,
  type CliResult,
  type RedisServer,
  type Workspace,
  copyProject,
} from './helpers.ts';

// The user's entry points as written: every file package.json's scripts name exists, and every
// `npm run` command of the code blocks of README.md and of every page of docs/ runs through npm,
// exactly as the page writes it (its placeholders filled in), in a scratch copy of the project;
// the links between those pages land on a page and a heading that exist.

const SCRIPTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

/** README and the pages of docs/ it leads to: what a user reads and copies commands from. */
const PAGES = [
  'README.md',
  ...(existsSync(join(ROOT, 'docs')) ? readdirSync(join(ROOT, 'docs')) : [])
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const TEXT = new Map(PAGES.map((page) => [page, readFileSync(join(ROOT, page), 'utf8')]));

/** The `npm run ...` commands of a page's sh code blocks, continuation lines joined, comments dropped. */
function pageCommands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  return blocks
    .flatMap((block) => block.replace(/\\\n\s*/g, '').split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.startsWith('npm run '));
}

const COMMANDS = new Map(PAGES.map((page) => [page, pageCommands(TEXT.get(page)!)]));

/** Each operator command, on the page a reader looks for it: the release in README's first steps too. */
const DOCUMENTED: [page: string, command: RegExp][] = [
  ['README.md', /^npm run depot -- release <file\.jar> /],
  ['docs/operations.md', /^npm run build$/],
  ['docs/operations.md', /^npm run demo$/],
  ['docs/operations.md', /^npm run depot -- release /],
  ['README.md', /^npm run depot -- withdraw <versionId> /],
  ['README.md', /^npm run depot -- token add <username> /],
  ['docs/operations.md', /^npm run depot -- withdraw <versionId> /],
  ['docs/operations.md', /^npm run depot -- restore <versionId>/],
  ['docs/operations.md', /^npm run depot -- edit <versionId> /],
  ['docs/operations.md', /^npm run depot -- user add /],
  ['docs/operations.md', /^npm run depot -- server add /],
  ['docs/operations.md', /^npm run depot -- user list$/],
  ['docs/operations.md', /^npm run depot -- user remove /],
  ['docs/operations.md', /^npm run depot -- server list /],
  ['docs/operations.md', /^npm run depot -- server token /],
  ['docs/operations.md', /^npm run depot -- server remove /],
  ['docs/operations.md', /^npm run depot -- stats add /],
  ['docs/operations.md', /^npm run depot -- chart-url /],
  ['docs/operations.md', /^npm run depot -- migrate/],
  ['docs/operations.md', /^npm run depot -- webhook add /],
  ['docs/operations.md', /^npm run depot -- webhook list$/],
  ['docs/operations.md', /^npm run depot -- webhook test /],
  ['docs/operations.md', /^npm run depot -- webhook remove /],
  ['docs/operations.md', /^npm run depot -- counts import /],
  ['docs/operations.md', /^npm run depot -- counts repair$/],
  ['docs/operations.md', /^npm run depot -- audit /],
  ['docs/deployment.md', /^npm run depot -- release "\$JAR"/],
];

/** A page's text without its code blocks, where `#` starts no heading. */
const outsideBlocks = (markdown: string) => markdown.replace(/^```[\s\S]*?^```$/gm, '');
/** A page's text without code (blocks and spans), where `[...](...)` is no link. */
const prose = (markdown: string) => outsideBlocks(markdown).replace(/`[^`\n]*`/g, '');

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

const scripts = suite('package.json scripts');

scripts('every file a script names exists', () => {
  let named = 0;
  for (const [name, command] of Object.entries(SCRIPTS)) {
    for (const [file] of command.matchAll(/[\w./-]+\.(?:[cm]?[jt]s)\b/g)) {
      named++;
      assert.ok(existsSync(join(ROOT, file)), `npm run ${name} names ${file}, which does not exist`);
    }
  }
  assert.ok(named >= Object.keys(SCRIPTS).length - 1, `${named} files found in ${Object.keys(SCRIPTS).length} scripts`);
});

scripts('every script README and docs/ run exists, and each operator command is documented on its page', () => {
  assert.ok(PAGES.length > 1, `docs/ has no page: ${PAGES.join(', ')}`);
  for (const [page, commands] of COMMANDS) {
    for (const command of commands) {
      const script = command.split(/\s+/)[2]!;
      assert.ok(script in SCRIPTS, `${page} runs npm run ${script}, which package.json does not define`);
    }
  }
  for (const [page, pattern] of DOCUMENTED) {
    const commands = COMMANDS.get(page) ?? [];
    assert.ok(
      commands.some((c) => pattern.test(c)),
      `${page}'s code blocks have no command matching ${pattern}: ${commands.join(' | ')}`,
    );
  }
});

scripts('every link between README and docs/ lands on a page and a heading that exist', () => {
  let links = 0;
  for (const [page, text] of TEXT) {
    for (const [, target] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue; // https:, mailto:: outside the project
      links++;
      const [path, anchor] = target!.split('#') as [string, string | undefined];
      const file = path === '' ? page : join(dirname(page), path);
      assert.ok(existsSync(join(ROOT, file)), `${page} links to ${target}: no file ${file}`);
      if (anchor === undefined || !file.endsWith('.md')) continue;
      const headings = [...outsideBlocks(readFileSync(join(ROOT, file), 'utf8')).matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
        slug(m[1]!),
      );
      assert.ok(
        headings.includes(anchor),
        `${page} links to ${target}: ${file} has no heading #${anchor} (${headings.join(', ')})`,
      );
    }
  }
  assert.ok(links >= PAGES.length, `${links} links found in ${PAGES.length} pages`);
});
scripts.run();

const REDIS = findProgram('redis-server');
if (!REDIS)
  console.warn(
    'entry-points.test.ts: redis-server not installed, `npm run depot -- migrate` not run (apt-get install -y redis-server; .ci/run does)',
  );

type Scratch = {
  dir: string;
  workspace: Workspace;
  env: NodeJS.ProcessEnv;
  values: Record<string, string>;
  redis: RedisServer | null;
  /** Where docs/operations.md's webhook is pointed: a loopback receiver answering 204, with what it received. */
  receiver: { server: Server; received: IncomingHttpHeaders[] };
  /** The id of the version README's release made. */
  released: string;
};
const ctx = {} as Scratch;

/** `command` through sh in the scratch copy, as an operator types it. */
function shell(command: string, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      'sh',
      ['-c', command],
      { cwd: ctx.dir, env: { ...ctx.env, ...env }, timeout: 180_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/** A page's command with its optional parts included and its placeholders given values (shell-quoted). */
function fillIn(command: string): string {
  const filled = command
    .replace(/\[([^\]]+)\]/g, '$1')
    .split(/\s+/)
    .map((word) => (word in ctx.values ? quote(ctx.values[word]!) : word))
    .join(' ');
  assert.not.match(filled, /<[^>]+>/, `a placeholder of the docs has no value in this test: ${filled}`);
  return filled;
}

/** npm prints `> package@version script` and the script's command line before the script's own output. */
function jsonAfterBanner(stdout: string): Record<string, unknown> {
  const lines = stdout.split('\n');
  while (lines.length > 0 && (lines[0]!.trim() === '' || lines[0]!.startsWith('> '))) lines.shift();
  const value = JSON.parse(lines.join('\n')) as unknown;
  assert.type(value, 'object');
  return value as Record<string, unknown>;
}

/** The commands run (or knowingly skipped) below: every command of every page must be among them. */
const ran = new Set<string>();

const readme = suite("README's and docs/' commands through npm run");
readme.before(async () => {
  ctx.dir = await copyProject('depot-entry-');
  ctx.redis = REDIS ? await startRedis(REDIS) : null;
  const received: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    received.push(req.headers);
    req.resume().on('end', () => res.writeHead(204).end());
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  ctx.receiver = { server, received };
  // The scratch copy's own folders (what the defaults name too), the site off and the shared build cache.
  const remove = () => rm(ctx.dir, { recursive: true, force: true });
  ctx.workspace = {
    dir: ctx.dir,
    dataDir: join(ctx.dir, 'data'),
    distDir: join(ctx.dir, 'dist'),
    storageDir: join(ctx.dir, '.storage'),
    site: false,
    remove,
  };
  ctx.env = workspaceEnv(ctx.workspace);
  delete ctx.env.REDIS_URL;
  const jar = join(ctx.dir, 'ReadmePlugin-1.4.0.jar');
  await writeFile(jar, pluginJar('readme-1.4.0', ['PaperMC', 'Folia']));
  const notes = join(ctx.dir, 'notes.md');
  await writeFile(notes, '## 1.4.0\n\n- Notes as an operator writes them.\n');
  ctx.values = {
    '<file.jar>': jar,
    '<notes.md>': notes,
    '<username>': 'olivia',
    URL: 'https://example.com/olivia.png',
    '<players>': '42',
    'ISO-8601': new Date(Date.now() - 3_600_000).toISOString(),
    ...(ctx.redis ? { 'redis://host:6379': ctx.redis.url } : {}),
    '<url>': `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/depot`,
    '<access.log>': join(ctx.dir, 'depot.log'),
  };
});
readme.after(async () => {
  ctx.receiver.server.closeAllConnections();
  ctx.receiver.server.close();
  await ctx.redis?.stop();
  await ctx.workspace.remove();
});

/** The first command of `page` matching `pattern`, as the page writes it. */
function pageCommand(page: string, pattern: RegExp): string {
  const matching = (COMMANDS.get(page) ?? []).filter((c) => pattern.test(c));
  assert.ok(matching.length >= 1, `${page} has no command matching ${pattern}`);
  return matching[0]!;
}

/** The first command of `page` matching `pattern`, filled in, run; exit 0 asserted. */
async function runDocumented(page: string, pattern: RegExp, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const command = pageCommand(page, pattern);
  ran.add(command);
  const result = await shell(fillIn(command), env);
  assert.is(result.code, 0, `${page}: ${command}\n${result.stderr}`);
  return result;
}

readme('npm run build', async () => {
  const result = await runDocumented('docs/operations.md', /^npm run build$/);
  assert.match(result.stdout, /\[build\] swap: .*current ->/);
  assert.ok(existsSync(join(ctx.dir, 'dist', 'current', 'manifest.json')));
});

readme('npm run demo', async () => {
  const result = await runDocumented('docs/operations.md', /^npm run demo$/);
  assert.match(result.stdout, /demo data: 15 versions, 3 users/);
  const files = await readdir(join(ctx.dir, 'data', 'versions'));
  assert.is(files.filter((name) => name.endsWith('.json')).length, 15);
  assert.is(files.filter((name) => name.endsWith('.md')).length, 5, 'the demo changelogs');
});

readme('npm run depot -- release <file.jar> --version 1.4.0 --java 21 --software PaperMC,Folia [...]', async () => {
  const record = jsonAfterBanner((await runDocumented('README.md', /^npm run depot -- release <file\.jar>/)).stdout);
  assert.is(record.pluginVersion, '1.4.0');
  assert.is(record.javaVersion, '21');
  assert.equal(record.serverSoftware, ['PaperMC', 'Folia']);
  assert.is(record.fileName, 'ReadmePlugin-1.4.0.jar');
  assert.is(record.channel, 'beta');
  ctx.released = record.id as string;
  ctx.values['<versionId>'] = record.id as string;
  assert.ok(existsSync(join(ctx.dir, 'data', 'versions', `${record.id}.json`)));
  assert.is(
    readFileSync(join(ctx.dir, 'data', 'versions', `${record.id}.md`), 'utf8'),
    '## 1.4.0\n\n- Notes as an operator writes them.\n',
  );
});

readme('npm run depot -- release "$JAR" --version "$VERSION" ... (the CI release flow)', async () => {
  const jar = join(ctx.dir, 'CiPlugin.jar');
  await writeFile(jar, pluginJar('ci-1.4.1', ['PaperMC', 'Folia']));
  const record = jsonAfterBanner(
    (await runDocumented('docs/deployment.md', /^npm run depot -- release "\$JAR"/, { JAR: jar, VERSION: '1.4.1' }))
      .stdout,
  );
  assert.is(record.pluginVersion, '1.4.1');
  assert.is(record.fileName, 'CiPlugin.jar');
});

readme('npm run depot -- withdraw, restore and edit <versionId> (README and operations.md)', async () => {
  for (const page of ['README.md', 'docs/operations.md']) {
    const withdrawn = jsonAfterBanner((await runDocumented(page, /^npm run depot -- withdraw <versionId> /)).stdout);
    assert.equal(withdrawn.withdrawn, {
      reason: 'corrupts worlds on 1.21.4',
      at: withdrawn.updatedAt,
      by: page === 'README.md' ? 'operator' : 'alice',
    });
    const restored = jsonAfterBanner((await runDocumented(page, /^npm run depot -- restore <versionId>/)).stdout);
    assert.is(restored.withdrawn, undefined);
  }
  const edited = jsonAfterBanner((await runDocumented('README.md', /^npm run depot -- edit <versionId> /)).stdout);
  assert.is(edited.channel, 'release');
  const full = jsonAfterBanner(
    (await runDocumented('docs/operations.md', /^npm run depot -- edit <versionId> /)).stdout,
  );
  assert.equal([full.channel, full.proxyVersion, full.minecraftVersion], ['release', '3.4', '1.21.4']);
  assert.equal(full.minecraftVersions, [{ from: '1.20.6', to: '1.21.4' }]);
  assert.is(
    readFileSync(join(ctx.dir, 'data', 'versions', `${full.id}.md`), 'utf8'),
    '## 1.4.0\n\n- Notes as an operator writes them.\n',
  );
});

readme('npm run depot -- user add <username> [--nickname N] [--image URL]', async () => {
  const user = jsonAfterBanner((await runDocumented('docs/operations.md', /^npm run depot -- user add /)).stdout);
  assert.equal(Object.keys(user).sort(), ['id', 'token', 'username']);
  assert.is(user.username, 'olivia');
});

readme('npm run depot -- token add <username> --name ci (README)', async () => {
  const token = jsonAfterBanner((await runDocumented('README.md', /^npm run depot -- token add <username> /)).stdout);
  assert.equal([token.username, token.name], ['olivia', 'ci']);
  assert.match(String(token.token), /^dpp_[A-Za-z0-9_-]{43}$/);
});

readme('npm run depot -- server add --owner <username> [--private] [--name N]', async () => {
  const server = jsonAfterBanner((await runDocumented('docs/operations.md', /^npm run depot -- server add /)).stdout);
  assert.is(server.owner, 'olivia');
  assert.is(server.private, true);
  assert.type(server.ingestKey, 'string');
  ctx.values['<serverId>'] = server.id as string;
});

readme('npm run depot -- stats add <serverId> <players> [--at ISO-8601]', async () => {
  const sample = jsonAfterBanner((await runDocumented('docs/operations.md', /^npm run depot -- stats add /)).stdout);
  assert.equal(sample, { serverId: ctx.values['<serverId>'], at: ctx.values['ISO-8601'], players: 42 });
});

readme('npm run depot -- migrate [--to redis://host:6379]', async () => {
  if (!ctx.redis) {
    ran.add(pageCommand('docs/operations.md', /^npm run depot -- migrate/));
    return console.warn('  (skipped: no redis-server)');
  }
  const report = jsonAfterBanner((await runDocumented('docs/operations.md', /^npm run depot -- migrate/)).stdout) as {
    copied: Record<string, number>;
  };
  assert.equal(report.copied, {
    servers: 1,
    tokens: 1,
    publishingTokens: 1,
    samples: 1,
    webhooks: 0,
    deliveries: 0,
  });
});
readme('npm run depot -- webhook add <url> [--format discord] [--events release]', async () => {
  const webhook = jsonAfterBanner((await runDocumented('docs/operations.md', /^npm run depot -- webhook add /)).stdout);
  assert.equal(Object.keys(webhook).sort(), ['createdAt', 'events', 'format', 'id', 'secret', 'url']);
  assert.equal([webhook.url, webhook.format, webhook.events], [ctx.values['<url>'], 'discord', ['release']]);
  ctx.values['<id>'] = webhook.id as string;
});

readme('npm run depot -- webhook list', async () => {
  const { webhooks } = jsonAfterBanner(
    (await runDocumented('docs/operations.md', /^npm run depot -- webhook list$/)).stdout,
  ) as {
    webhooks: { id: string; pending: number; lastOutcome: unknown }[];
  };
  assert.equal(
    webhooks.map((w) => [w.id, w.pending, w.lastOutcome]),
    [[ctx.values['<id>'], 0, null]],
  );
});

readme('npm run depot -- webhook test <id>', async () => {
  const ping = jsonAfterBanner((await runDocumented('docs/operations.md', /^npm run depot -- webhook test /)).stdout);
  assert.equal([ping.webhook, ping.event, ping.state], [ctx.values['<id>'], 'ping', 'delivered']);
  assert.is(ctx.receiver.received.at(-1)?.['x-depot-delivery'], ping.delivery);
});

readme('npm run depot -- webhook remove <id>', async () => {
  const removed = jsonAfterBanner(
    (await runDocumented('docs/operations.md', /^npm run depot -- webhook remove /)).stdout,
  );
  assert.equal(removed, { id: ctx.values['<id>'], removed: true });
});

readme('npm run depot -- audit [--since 7d] [--target <id>]', async () => {
  const { stdout } = await runDocumented('docs/operations.md', /^npm run depot -- audit /);
  const records = stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { action: string; target: string });
  assert.equal(
    records.map((record) => [record.action, record.target]),
    [
      ['webhook add', ctx.values['<id>']],
      ['webhook remove', ctx.values['<id>']],
    ],
  );
});

readme('npm run depot -- chart-url <serverId> [--days 7] [--expires 30d]', async () => {
  const minted = jsonAfterBanner((await runDocumented('docs/operations.md', /^npm run depot -- chart-url /)).stdout);
  assert.is(minted.serverId, ctx.values['<serverId>']);
  assert.match(String(minted.url), /\/api\/servers\/[0-9a-f-]+\/chart\/players\?.*days=7.*&exp=\d+&sig=[\w-]+$/);
  const days = (Date.parse(String(minted.expires)) - Date.now()) / 86_400_000;
  assert.ok(days > 29.9 && days <= 30, `expires ${String(minted.expires)}`);
});

readme('npm run depot -- counts import <access.log>', async () => {
  // One download of README's release, as nginx's `depot` log_format writes it (docs/api.md).
  const [, day, month, year, time] = new Date().toUTCString().replace(',', '').split(' ');
  const request = `GET /api/plugin-versions/download/${ctx.released} HTTP/1.1`;
  await writeFile(
    ctx.values['<access.log>']!,
    `203.0.113.9 - - [${day}/${month}/${year}:${time} +0000] "${request}" 200 512 "-" "curl/8.5.0" "-"\n`,
  );
  const report = jsonAfterBanner(
    (await runDocumented('docs/operations.md', /^npm run depot -- counts import /)).stdout,
  );
  assert.equal([report.lines, report.downloads, report.counted], [1, 1, 1]);
});

readme('npm run depot -- counts repair', async () => {
  const report = jsonAfterBanner(
    (await runDocumented('docs/operations.md', /^npm run depot -- counts repair$/)).stdout,
  );
  assert.equal(report, { journals: 1, repaired: [], dropped: 0 });
});

readme('npm run depot -- user list, server list, server token, server remove, user remove', async () => {
  const depot = async (pattern: RegExp) =>
    jsonAfterBanner((await runDocumented('docs/operations.md', pattern)).stdout) as Record<string, unknown>;
  const serverId = ctx.values['<serverId>'];
  const { users } = (await depot(/^npm run depot -- user list$/)) as { users: { username: string; servers: number }[] };
  assert.equal(users.find((u) => u.username === 'olivia')?.servers, 1);
  const { servers } = (await depot(/^npm run depot -- server list /)) as { servers: { id: string }[] };
  assert.equal(
    servers.map((s) => s.id),
    [serverId],
  );
  const rotated = await depot(/^npm run depot -- server token /);
  assert.equal([rotated.id, typeof rotated.ingestKey], [serverId, 'string']);
  const removed = await depot(/^npm run depot -- server remove /);
  assert.equal([removed.id, removed.removed], [serverId, true]);
  const user = await depot(/^npm run depot -- user remove /);
  assert.equal([user.username, user.removed], ['olivia', true]);
});

readme('every npm run command of README and docs/ was run above', () => {
  for (const [page, commands] of COMMANDS) {
    for (const command of commands) {
      // Minutes of load on a shared machine, with wrk and nginx: the benchmarks are run on their own.
      if (/^npm run bench\b/.test(command)) continue;
      assert.ok(ran.has(command), `${page} shows \`${command}\`, which no case of this file runs`);
    }
  }
});
readme.run();
