import { existsSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makePluginJar } from '../build/plugin-jar.ts';
import type { PluginVersion } from '../server/versions/schema.ts';
import {
  makeWorkspace,
  runDepot,
  spawnOrigin,
  until,
  type OriginProcess,
  type Workspace,
  startPublishing,
  stopPublishing,
} from './helpers.ts';

// Issue 30 item 6: `depot publish` as an operator or a CI job types it, against the origin as
// operators run it: no data/ of its own, the token from the environment variable it names.

const ctx = {} as { workspace: Workspace; origin: OriginProcess; token: string; tokenId: string };

/** Its descriptors back every software these tests publish for (issue 31): Folia's key and Velocity's file. */
const jar = (version: string) =>
  makePluginJar({
    files: {
      'plugin.yml': `name: Cli\nversion: ${version}\nmain: org.example.Cli\nfolia-supported: true\n`,
      'velocity-plugin.json': JSON.stringify({ id: 'cli', main: 'org.example.CliVelocity' }),
    },
  });

/** Folders that do not exist: publish must neither read nor create them. */
const elsewhere = () => ({
  DATA_DIR: join(ctx.workspace.dir, 'no-data'),
  DIST_DIR: join(ctx.workspace.dir, 'no-dist'),
  STORAGE_DIR: join(ctx.workspace.dir, 'no-storage'),
});

/** `depot publish <file> --url <origin> --token-env DEPOT_TOKEN ...` with DEPOT_TOKEN set to `token` ('' for unset). */
function publish(args: string[], token = ctx.token) {
  const [file, ...rest] = args;
  return runDepot(['publish', file!, '--url', ctx.origin.url, '--token-env', 'DEPOT_TOKEN', ...rest], ctx.workspace, {
    ...elsewhere(),
    DEPOT_TOKEN: token,
  });
}

async function writeJar(name: string, version: string) {
  const path = join(ctx.workspace.dir, name);
  const bytes = jar(version);
  await writeFile(path, bytes);
  return { path, bytes };
}

const versionCount = async () => (await readdir(join(ctx.workspace.dataDir, 'versions'))).length;

const cli = suite('depot publish');
cli.before(async () => {
  Object.assign(ctx, await startPublishing());
});
cli.after(() => stopPublishing(ctx));

cli('publishes a JAR as the token user and prints {version} once the origin serves it; no data/ needed', async () => {
  const { path, bytes } = await writeJar('Cli-9.0.0.jar', '9.0.0');
  const notes = join(ctx.workspace.dir, 'notes.md');
  await writeFile(notes, '## 9.0.0\n\n- From CI.\n');
  const result = await publish([
    path,
    ...['--version', '9.0.0', '--java', '21', '--software', 'PaperMC,Folia'],
    ...['--minecraft', '1.20.6-1.21.4', '--channel', 'beta', '--changelog', notes],
  ]);
  assert.is(result.code, 0, result.stderr);
  const { version } = JSON.parse(result.stdout) as { version: PluginVersion };
  assert.equal(
    [version.pluginVersion, version.javaVersion, version.serverSoftware, version.channel, version.createdBy],
    ['9.0.0', '21', ['PaperMC', 'Folia'], 'beta', 'alice'],
  );
  assert.equal(
    [version.fileName, version.fileSize, version.changelog],
    ['Cli-9.0.0.jar', bytes.length, '## 9.0.0\n\n- From CI.\n'],
  );
  // Served when the command returns: the download is the JAR sent.
  const download = await fetch(`${ctx.origin.url}/api/plugin-versions/download/${version.id}`);
  assert.is(download.status, 200);
  assert.equal(Buffer.from(await download.arrayBuffer()), Buffer.from(bytes));
  for (const folder of Object.values(elsewhere())) assert.not.ok(existsSync(folder), `${folder} was created`);
  assert.not.ok(result.stdout.includes(ctx.token) || result.stderr.includes(ctx.token), 'the token is printed');
});

cli('a duplicate is the depot 409 on one line naming the existing id, exit 1', async () => {
  const first = await writeJar('Dup-9.1.0.jar', '9.1.0');
  const release = ['--version', '9.1.0', '--java', '17', '--software', 'Velocity'];
  const published = await publish([first.path, ...release]);
  assert.is(published.code, 0, published.stderr);
  const { id } = (JSON.parse(published.stdout) as { version: PluginVersion }).version;
  const before = await versionCount();
  const again = await writeJar('Dup-9.1.0-again.jar', '9.1.0 again');
  const duplicate = await publish([again.path, ...release]);
  assert.is(duplicate.code, 1);
  assert.is(duplicate.stdout, '');
  const lines = duplicate.stderr.trim().split('\n');
  assert.is(lines.length, 1, duplicate.stderr);
  assert.match(lines[0]!, /^depot publish: 409 /);
  assert.ok(lines[0]!.includes(id), lines[0]);
  assert.is(await versionCount(), before);
});

cli('a wrong token is the depot 401 on one line, never printed', async () => {
  const { path } = await writeJar('Wrong-9.2.0.jar', '9.2.0');
  const wrong = `dpp_${'B'.repeat(43)}`;
  const before = await versionCount();
  const result = await publish([path, '--version', '9.2.0', '--java', '21', '--software', 'PaperMC'], wrong);
  assert.is(result.code, 1);
  assert.match(result.stderr.trim(), /^depot publish: 401 A publishing token is required[^\n]*$/);
  assert.not.ok(result.stderr.includes(wrong) || result.stdout.includes(wrong));
  assert.is(await versionCount(), before);
});

cli('refused before any request: a missing variable, --token, a URL that is not http(s)', async () => {
  const { path } = await writeJar('Refused-9.3.0.jar', '9.3.0');
  const release = ['--version', '9.3.0', '--java', '21', '--software', 'PaperMC'];
  const before = await versionCount();
  const unset = await publish([path, ...release], '');
  assert.is(unset.code, 1);
  assert.match(unset.stderr.trim(), /^depot publish: --token-env: the environment variable DEPOT_TOKEN is not set/);
  const asArgument = await publish([path, ...release, '--token', ctx.token]);
  assert.is(asArgument.code, 1);
  assert.match(asArgument.stderr.trim(), /^depot publish: --token: /);
  assert.not.ok(asArgument.stderr.includes(ctx.token), 'the refusal repeats the token');
  const ftp = await runDepot(
    ['publish', path, '--url', 'ftp://127.0.0.1/', '--token-env', 'DEPOT_TOKEN', ...release],
    ctx.workspace,
    { ...elsewhere(), DEPOT_TOKEN: ctx.token },
  );
  assert.is(ftp.code, 1);
  assert.match(ftp.stderr.trim(), /^depot publish: --url: must be http or https/);
  const badJava = await publish([path, '--version', '9.3.0', '--java', '16', '--software', 'PaperMC']);
  assert.match(badJava.stderr.trim(), /^depot publish: --java: Unknown Java version "16"/);
  assert.is(await versionCount(), before);
});

cli('a server that echoes the Authorization header: the token is in no line printed, however it answers', async () => {
  const { path } = await writeJar('Echo-9.3.0.jar', '9.3.0');
  const token = `dpp_${'E'.repeat(43)}`;
  // A proxy in front of a depot that says what it was sent: in the error, the status text, a redirect.
  const answers = [
    (auth: string, res: ServerResponse) =>
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `refused ${auth}` })),
    (auth: string, res: ServerResponse) => res.writeHead(502, `Bad Gateway for ${auth}`).end('<html>upstream</html>'),
    (auth: string, res: ServerResponse) =>
      res.writeHead(302, { location: `https://elsewhere.example/?auth=${auth.slice('Bearer '.length)}` }).end(),
  ];
  let next = 0;
  const echo = createServer((req, res) => {
    req.resume();
    req.on('end', () => answers[next++ % answers.length]!(req.headers.authorization ?? '', res));
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    for (let i = 0; i < answers.length; i++) {
      const result = await runDepot(
        [
          'publish',
          path,
          '--url',
          url,
          '--token-env',
          'DEPOT_TOKEN',
          '--version',
          '9.3.0',
          '--java',
          '21',
          '--software',
          'PaperMC',
        ],
        ctx.workspace,
        { ...elsewhere(), DEPOT_TOKEN: token },
      );
      assert.is(result.code, 1, result.stderr);
      assert.match(
        result.stderr,
        /^depot publish: (400 refused Bearer \*\*\*|502 Bad Gateway for Bearer \*\*\*|302 the depot moved to https:\/\/elsewhere\.example\/\?auth=\*\*\*)/m,
      );
      assert.not.ok(result.stderr.includes(token) || result.stdout.includes(token), result.stderr);
    }
  } finally {
    echo.close();
  }
});

const failedDeploy = suite('depot publish when the depot AFTER_SWAP fails');
/** Said by the failing AFTER_SWAP, as a command holding a secret would: never in the audit log. */
const SECRET = 'rsync-password-for-test-4f1c';
failedDeploy.before(async () => {
  ctx.workspace = await makeWorkspace();
  const added = await runDepot(['token', 'add', 'alice', '--name', 'ci'], ctx.workspace);
  assert.is(added.code, 0, added.stderr);
  ({ token: ctx.token, id: ctx.tokenId } = JSON.parse(added.stdout) as { token: string; id: string });
  const trees = join(ctx.workspace.dir, 'trees.txt');
  const command = `RSYNC_PASSWORD=${SECRET}; echo "$RSYNC_PASSWORD" >&2; echo "$DEPOT_TREE" >> '${trees}'; exit 3`;
  ctx.origin = await spawnOrigin(ctx.workspace, { AFTER_SWAP: command });
});
failedDeploy.after(async () => {
  await until(() => !existsSync(join(ctx.workspace.distDir, '.build.lock')), 'the last build', 120_000);
  ctx.origin.child.kill('SIGTERM');
  await ctx.origin.exited;
  await ctx.workspace.remove();
});

failedDeploy('prints the version as published, then one line saying to run the deploy again; exit 2', async () => {
  const { path } = await writeJar('Deploy-9.4.0.jar', '9.4.0');
  const result = await publish([path, '--version', '9.4.0', '--java', '21', '--software', 'PaperMC']);
  assert.is(result.code, 2, result.stderr);
  const answer = JSON.parse(result.stdout) as { version: PluginVersion; deploy: unknown };
  assert.equal(answer.deploy, { ok: false, exitCode: 3 });
  const lines = result.stderr.trim().split('\n');
  assert.is(lines.length, 1, result.stderr);
  assert.match(
    lines[0]!,
    new RegExp(`^depot publish: published ${answer.version.id}, but the depot's AFTER_SWAP failed \\(exit 3\\)`),
  );
  assert.match(lines[0]!, /run AFTER_SWAP again/);
  const download = await fetch(`${ctx.origin.url}/api/plugin-versions/download/${answer.version.id}`);
  assert.is(download.status, 200, 'served by the origin all the same');
  await download.arrayBuffer();
});

failedDeploy(
  'each failed run is one `deploy fail` record in `depot audit`: the tree, exit code and publisher, no secret',
  async () => {
    await until(() => !existsSync(join(ctx.workspace.distDir, '.build.lock')), 'the full build', 120_000);
    const trees = async () => (await readFile(join(ctx.workspace.dir, 'trees.txt'), 'utf8')).trim().split('\n');
    const failures = async () => {
      const audit = await runDepot(['audit'], ctx.workspace);
      assert.is(audit.code, 0, audit.stderr);
      const records = audit.stdout.trim().split('\n').filter(Boolean);
      return { text: audit.stdout, records: records.map((line) => JSON.parse(line) as Record<string, unknown>) };
    };
    // The run after the full build finishes after its answer: each run's record follows its line.
    await until(
      async () =>
        (await failures()).records.filter((r) => r.action === 'deploy fail').length === (await trees()).length,
      'a record for each run',
      20_000,
    );
    const { text, records } = await failures();
    const deployFailures = records.filter((record) => record.action === 'deploy fail');
    assert.equal(
      deployFailures.map(({ target, actor, tokenId, changes }) => ({ target, actor, tokenId, changes })),
      (await trees()).map((tree) => ({
        target: basename(tree),
        actor: 'alice',
        tokenId: ctx.tokenId,
        changes: { exitCode: 3, tree },
      })),
    );
    const first = await runDepot(['audit', '--target', basename((await trees())[0]!)], ctx.workspace);
    assert.is(first.stdout.trim().split('\n').length, 1, first.stdout);
    for (const hidden of [SECRET, 'RSYNC_PASSWORD', 'exit 3', ctx.token]) assert.not.ok(text.includes(hidden), hidden);
  },
);

cli.run();
failedDeploy.run();
