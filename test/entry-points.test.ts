import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
} from './helpers.ts';

// The user's entry points as written: every file package.json's scripts name exists, and every
// `npm run` command of README.md's code blocks runs through npm, exactly as README writes it (its
// placeholders filled in), in a scratch copy of the project.

const SCRIPTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The `npm run ...` commands of README's sh code blocks, continuation lines joined, comments dropped. */
function readmeCommands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  return blocks
    .flatMap((block) => block.replace(/\\\n\s*/g, '').split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.startsWith('npm run '));
}

const COMMANDS = readmeCommands(README);

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

scripts('every script README runs exists, and README documents each operator command', () => {
  for (const command of COMMANDS) {
    const script = command.split(/\s+/)[2]!;
    assert.ok(script in SCRIPTS, `README runs npm run ${script}, which package.json does not define`);
  }
  for (const pattern of [
    /^npm run build$/,
    /^npm run demo$/,
    /^npm run depot -- release /,
    /^npm run depot -- user add /,
    /^npm run depot -- server add /,
    /^npm run depot -- stats add /,
    /^npm run depot -- migrate/,
    /^npm run depot -- webhook add /,
    /^npm run depot -- webhook list$/,
    /^npm run depot -- webhook test /,
    /^npm run depot -- webhook remove /,
  ]) {
    assert.ok(
      COMMANDS.some((c) => pattern.test(c)),
      `README's code blocks have no command matching ${pattern}: ${COMMANDS.join(' | ')}`,
    );
  }
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
  /** Where README's webhook is pointed: a loopback receiver answering 204, with what it received. */
  receiver: { server: Server; received: IncomingHttpHeaders[] };
};
const ctx = {} as Scratch;

/** The project's files (not node_modules, dist/ or state) in a temp folder, node_modules linked. */
async function copyProject(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'depot-entry-'));
  const skip = new Set(['node_modules', '.git', 'dist', '.storage', '.screenshots']);
  for (const name of await readdir(ROOT)) {
    if (!skip.has(name)) await cp(join(ROOT, name), join(dir, name), { recursive: true });
  }
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

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

/** README's command with its optional parts included and its placeholders given values (shell-quoted). */
function fillIn(command: string): string {
  const filled = command
    .replace(/\[([^\]]+)\]/g, '$1')
    .split(/\s+/)
    .map((word) => (word in ctx.values ? quote(ctx.values[word]!) : word))
    .join(' ');
  assert.not.match(filled, /<[^>]+>/, `a README placeholder has no value in this test: ${filled}`);
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

const readme = suite("README's commands through npm run");
readme.before(async () => {
  ctx.dir = await copyProject();
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
  await writeFile(jar, pluginJar('readme-1.4.0'));
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
  };
});
readme.after(async () => {
  ctx.receiver.server.closeAllConnections();
  ctx.receiver.server.close();
  await ctx.redis?.stop();
  await ctx.workspace.remove();
});

/** README's one command matching `pattern`, filled in, run; exit 0 asserted. */
async function runReadme(pattern: RegExp, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const matching = COMMANDS.filter((c) => pattern.test(c));
  assert.ok(matching.length >= 1, `README has no command matching ${pattern}`);
  const result = await shell(fillIn(matching[0]!), env);
  assert.is(result.code, 0, `${matching[0]}\n${result.stderr}`);
  return result;
}

readme('npm run build', async () => {
  const result = await runReadme(/^npm run build$/);
  assert.match(result.stdout, /\[build\] swap: .*current ->/);
  assert.ok(existsSync(join(ctx.dir, 'dist', 'current', 'manifest.json')));
});

readme('npm run demo', async () => {
  const result = await runReadme(/^npm run demo$/);
  assert.match(result.stdout, /demo data: 14 versions, 3 users/);
  const files = await readdir(join(ctx.dir, 'data', 'versions'));
  assert.is(files.filter((name) => name.endsWith('.json')).length, 14);
  assert.is(files.filter((name) => name.endsWith('.md')).length, 4, 'the demo changelogs');
});

readme('npm run depot -- release <file.jar> --version 1.4.0 --java 21 --software PaperMC,Folia [...]', async () => {
  const record = jsonAfterBanner((await runReadme(/^npm run depot -- release <file\.jar>/)).stdout);
  assert.is(record.pluginVersion, '1.4.0');
  assert.is(record.javaVersion, '21');
  assert.equal(record.serverSoftware, ['PaperMC', 'Folia']);
  assert.is(record.fileName, 'ReadmePlugin-1.4.0.jar');
  assert.is(record.channel, 'beta');
  assert.ok(existsSync(join(ctx.dir, 'data', 'versions', `${record.id}.json`)));
  assert.is(
    readFileSync(join(ctx.dir, 'data', 'versions', `${record.id}.md`), 'utf8'),
    '## 1.4.0\n\n- Notes as an operator writes them.\n',
  );
});

readme('npm run depot -- release "$JAR" --version "$VERSION" ... (the CI release flow)', async () => {
  const jar = join(ctx.dir, 'CiPlugin.jar');
  await writeFile(jar, pluginJar('ci-1.4.1'));
  const record = jsonAfterBanner(
    (await runReadme(/^npm run depot -- release "\$JAR"/, { JAR: jar, VERSION: '1.4.1' })).stdout,
  );
  assert.is(record.pluginVersion, '1.4.1');
  assert.is(record.fileName, 'CiPlugin.jar');
});

readme('npm run depot -- user add <username> [--nickname N] [--image URL]', async () => {
  const user = jsonAfterBanner((await runReadme(/^npm run depot -- user add /)).stdout);
  assert.equal(Object.keys(user).sort(), ['id', 'token', 'username']);
  assert.is(user.username, 'olivia');
});

readme('npm run depot -- server add --owner <username> [--private] [--name N]', async () => {
  const server = jsonAfterBanner((await runReadme(/^npm run depot -- server add /)).stdout);
  assert.is(server.owner, 'olivia');
  assert.is(server.private, true);
  assert.type(server.ingestKey, 'string');
  ctx.values['<serverId>'] = server.id as string;
});

readme('npm run depot -- stats add <serverId> <players> [--at ISO-8601]', async () => {
  const sample = jsonAfterBanner((await runReadme(/^npm run depot -- stats add /)).stdout);
  assert.equal(sample, { serverId: ctx.values['<serverId>'], at: ctx.values['ISO-8601'], players: 42 });
});

readme('npm run depot -- migrate [--to redis://host:6379]', async () => {
  if (!ctx.redis) return console.warn('  (skipped: no redis-server)');
  const report = jsonAfterBanner((await runReadme(/^npm run depot -- migrate/)).stdout) as {
    copied: Record<string, number>;
  };
  assert.equal(report.copied, { servers: 1, tokens: 1, samples: 1, webhooks: 0, deliveries: 0 });
});
readme('npm run depot -- webhook add <url> [--format discord] [--events release]', async () => {
  const webhook = jsonAfterBanner((await runReadme(/^npm run depot -- webhook add /)).stdout);
  assert.equal(Object.keys(webhook).sort(), ['createdAt', 'events', 'format', 'id', 'secret', 'url']);
  assert.equal([webhook.url, webhook.format, webhook.events], [ctx.values['<url>'], 'discord', ['release']]);
  ctx.values['<id>'] = webhook.id as string;
});

readme('npm run depot -- webhook list', async () => {
  const { webhooks } = jsonAfterBanner((await runReadme(/^npm run depot -- webhook list$/)).stdout) as {
    webhooks: { id: string; pending: number; lastOutcome: unknown }[];
  };
  assert.equal(
    webhooks.map((w) => [w.id, w.pending, w.lastOutcome]),
    [[ctx.values['<id>'], 0, null]],
  );
});

readme('npm run depot -- webhook test <id>', async () => {
  const ping = jsonAfterBanner((await runReadme(/^npm run depot -- webhook test /)).stdout);
  assert.equal([ping.webhook, ping.event, ping.state], [ctx.values['<id>'], 'ping', 'delivered']);
  assert.is(ctx.receiver.received.at(-1)?.['x-depot-delivery'], ping.delivery);
});

readme('npm run depot -- webhook remove <id>', async () => {
  const removed = jsonAfterBanner((await runReadme(/^npm run depot -- webhook remove /)).stdout);
  assert.equal(removed, { id: ctx.values['<id>'], removed: true });
});
readme.run();
