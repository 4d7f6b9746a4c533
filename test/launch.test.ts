import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ROOT,
  copyProject,
  makeWorkspace,
  runDepot,
  until,
  workspaceEnv,
  type CliResult,
  type Workspace,
} from './helpers.ts';

// `npm run depot` runs build/cli/launch.mjs, which bundles depot.ts and what it imports with esbuild
// and rebuilds that bundle when a source changed. Every run here goes through npm, as an operator
// types it, in a scratch copy of the project whose node_modules/ is its own folder (each package
// linked), so the copy's bundle in node_modules/.cache/depot-cli/ is its own.

const ctx = {} as { dir: string; workspace: Workspace };

/** `npm run --silent depot -- <args>` in the scratch copy, with the workspace's folders. */
function npmDepot(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      'npm',
      ['run', '--silent', 'depot', '--', ...args],
      { cwd: ctx.dir, env: workspaceEnv(ctx.workspace, env), timeout: 120_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const CACHE = () => join(ctx.dir, 'node_modules/.cache/depot-cli');
const BUNDLED = /^\[depot\] bundled the CLI: \d+ inputs, \d+ ms\n/;
/** npm's own warnings (an unknown user config, an old npm) are not the CLI's output. */
const withoutNpm = (stderr: string) => stderr.replace(/^npm (?:warn|notice) .*\n/gm, '');
const stampTime = async () => (await stat(join(CACHE(), 'stamp.json'))).mtimeMs;
const stampDir = async () => (JSON.parse(await readFile(join(CACHE(), 'stamp.json'), 'utf8')) as { dir: string }).dir;

const bundle = suite('npm run depot: the bundle');
bundle.before(async () => {
  ctx.dir = await copyProject('depot-launch-');
  ctx.workspace = await makeWorkspace({ build: false });
});
bundle.after(async () => {
  await rm(ctx.dir, { recursive: true, force: true });
  await ctx.workspace.remove();
});

bundle('the first run builds the bundle, the second reuses it', async () => {
  const first = await npmDepot([]);
  assert.is(first.code, 1);
  assert.match(withoutNpm(first.stderr), BUNDLED);
  assert.match(first.stderr, /^usage: npm run depot -- <command>$/m);
  const built = await stampTime();
  const dir = await stampDir();
  assert.ok((await stat(join(CACHE(), dir, 'depot.js'))).isFile());

  const second = await npmDepot([]);
  assert.is(second.code, 1);
  assert.not.match(second.stderr, /bundled the CLI/);
  assert.is(withoutNpm(second.stderr), withoutNpm(first.stderr).replace(BUNDLED, ''));
  assert.is(await stampTime(), built);
});

bundle('an edited source under server/ makes the next run rebuild', async () => {
  await npmDepot([]);
  const built = await stampTime();
  const file = join(ctx.dir, 'server/config.ts');
  await writeFile(file, `${await readFile(file, 'utf8')}\n// edited\n`);
  const edited = await npmDepot([]);
  assert.is(edited.code, 1);
  assert.match(withoutNpm(edited.stderr), BUNDLED);
  assert.is.not(await stampTime(), built);
  assert.not.match(withoutNpm((await npmDepot([])).stderr), /bundled the CLI/);
});

bundle('what runs is the edited code; the previous bundle is kept, older ones removed', async () => {
  const file = join(ctx.dir, 'build/cli/depot.ts');
  const source = await readFile(file, 'utf8');
  const dirs: string[] = [await stampDir()];
  for (const edit of ['first edit', 'second edit']) {
    await writeFile(file, source.replace('usage: npm run depot', `usage (${edit}): npm run depot`));
    const result = await npmDepot([]);
    assert.match(withoutNpm(result.stderr), BUNDLED);
    assert.ok(result.stderr.includes(`usage (${edit}): npm run depot -- <command>`), result.stderr);
    dirs.push(await stampDir());
  }
  assert.is(new Set(dirs).size, 3);
  // A run that started from the previous bundle may still load its chunks; the one before it goes.
  const kept = (await readdir(CACHE())).filter((name) => name.startsWith('build-')).sort();
  assert.equal(kept, dirs.slice(1).sort());
  await writeFile(file, source);
});

bundle("a syntax error fails with esbuild's message and exit 1, and the fixed source runs again", async () => {
  const file = join(ctx.dir, 'server/config.ts');
  const source = await readFile(file, 'utf8');
  await writeFile(file, `${source}\nexport const broken = ;\n`);
  const failed = await npmDepot([]);
  assert.is(failed.code, 1);
  assert.is(failed.stdout, '');
  assert.match(failed.stderr, /server\/config\.ts:\d+:\d+:/);
  assert.match(failed.stderr, /Unexpected ";"/);
  assert.match(failed.stderr, /^depot: the CLI could not be bundled: /m);
  assert.not.match(failed.stderr, /^usage:/m, 'no older bundle runs instead');

  await writeFile(file, source);
  const fixed = await npmDepot([]);
  assert.is(fixed.code, 1);
  assert.match(withoutNpm(fixed.stderr), BUNDLED);
  assert.match(fixed.stderr, /^usage: npm run depot -- <command>$/m);
});

bundle('launches at the same time after a change all run, from one whole bundle', async () => {
  const file = join(ctx.dir, 'server/config.ts');
  await writeFile(file, `${await readFile(file, 'utf8')}// concurrent\n`);
  const results = await Promise.all([1, 2, 3, 4].map(() => npmDepot([])));
  for (const result of results) {
    assert.is(result.code, 1);
    assert.match(result.stderr, /^usage: npm run depot -- <command>$/m);
  }
  assert.not.ok(
    (await readdir(CACHE())).some((name) => name.startsWith('tmp-')),
    'no staging folder left',
  );
});

bundle(
  'a bundle a running command still uses is kept however often the sources change; removed once it ends',
  async () => {
    // A long command: `counts import` reading a named pipe, which ends only when the test writes to it.
    const built = await makeWorkspace();
    const fifo = join(built.dir, 'access.log');
    await new Promise<void>((resolve, reject) =>
      execFile('mkfifo', [fifo], (error) => (error ? reject(error) : resolve())),
    );
    await npmDepot([]);
    const used = await stampDir();
    const child = spawn('npm', ['run', '--silent', 'depot', '--', 'counts', 'import', fifo], {
      cwd: ctx.dir,
      env: workspaceEnv(built),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
    const exited = once(child, 'exit').then(([code]) => code as number | null);
    const file = join(ctx.dir, 'build/cli/depot.ts');
    const source = await readFile(file, 'utf8');
    try {
      await until(
        async () => (await readdir(join(CACHE(), used, '.users')).catch(() => [])).length > 0,
        'the running command marks its bundle',
      );
      for (const edit of ['one', 'two']) {
        await writeFile(file, source.replace('usage: npm run depot', `usage (${edit}): npm run depot`));
        assert.match(withoutNpm((await npmDepot([])).stderr), BUNDLED);
      }
      assert.is.not(await stampDir(), used);
      assert.ok((await stat(join(CACHE(), used, 'depot.js'))).isFile(), "the running command's bundle is kept");
      // The command goes on from its bundle and finishes.
      await writeFile(fifo, '');
      assert.is(await exited, 0, stderr);
      assert.match(stdout, /"lines": 0/);
      await writeFile(file, source.replace('usage: npm run depot', 'usage (three): npm run depot'));
      assert.match(withoutNpm((await npmDepot([])).stderr), BUNDLED);
      assert.not.ok(await stat(join(CACHE(), used)).catch(() => null), 'removed once no command uses it');
    } finally {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
      await writeFile(file, source);
      await built.remove();
    }
  },
);

bundle.run();

// The same answers as the CLI run by tsx from the sources (the checkout's build/cli/depot.ts).
const same = suite('npm run depot: the same CLI as depot.ts under tsx');
same.before(async () => {
  ctx.dir = await copyProject('depot-launch-');
  ctx.workspace = await makeWorkspace({ build: false });
});
same.after(async () => {
  await rm(ctx.dir, { recursive: true, force: true });
  await ctx.workspace.remove();
});

/** Progress lines with their times, folders and tree names (random ids make different trees) left out. */
const normalised = (stderr: string, workspace = ctx.workspace) =>
  withoutNpm(stderr)
    .replace(BUNDLED, '')
    .replaceAll(workspace.dir, 'WORKSPACE')
    .replace(/\(\d+ ms\)/g, '(N ms)')
    .replace(/[0-9a-f]{20}/g, 'TREE');

same('depot with no command: usage on stderr, nothing on stdout, exit 1', async () => {
  const bundled = await npmDepot([]);
  const tsx = await runDepot([], ctx.workspace);
  assert.equal({ ...bundled, stderr: withoutNpm(bundled.stderr).replace(BUNDLED, '') }, tsx);
});

const refusals: [string, string[]][] = [
  ['an unknown command', ['frobnicate', 'now']],
  ['release of a missing file', ['release', '/nonexistent/x.jar', '--version', '1.0.0', '--java', '21']],
  ['an unknown option', ['user', 'add', 'dave', '--colour', 'red']],
  ['server add without --owner', ['server', 'add']],
];
for (const [name, args] of refusals) {
  same(`a refusal: ${name}`, async () => {
    const bundled = await npmDepot(args);
    const tsx = await runDepot(args, ctx.workspace);
    assert.is(bundled.code, 1);
    assert.equal({ ...bundled, stderr: normalised(bundled.stderr) }, { ...tsx, stderr: normalised(tsx.stderr) });
  });
}

same("an uncaught error: the same message, its stack at the sources' lines", async () => {
  const env = { RATE_LIMIT: 'bogus' };
  const bundled = await npmDepot([], env);
  const tsx = await runDepot([], ctx.workspace, env);
  assert.is(bundled.code, 1);
  assert.is(tsx.code, 1);
  // Up to node's own frames (grey under FORCE_COLOR), which differ: the launcher imports the bundle.
  const ours = (stderr: string, root: string) =>
    withoutNpm(stderr)
      .replace(BUNDLED, '')
      .replaceAll(root, 'ROOT')
      .replace(/\x1b\[\d+m/g, '')
      .split('    at ModuleJob.run')[0] ?? '';
  assert.match(ours(bundled.stderr, ctx.dir), /^Error: Invalid configuration: RATE_LIMIT: /m);
  assert.match(
    ours(bundled.stderr, ctx.dir),
    /^    at readConfig \(ROOT\/server\/config\.ts:\d+:\d+\)$/m,
    bundled.stderr,
  );
  assert.is(ours(bundled.stderr, ctx.dir), ours(tsx.stderr, ROOT));
});

same('user add in a temp DATA_DIR and STORAGE_DIR: the same record, progress and data/users.json', async () => {
  const other = await makeWorkspace({ build: false });
  try {
    const bundled = await npmDepot(['user', 'add', 'dave', '--nickname', 'Dave']);
    const tsx = await runDepot(['user', 'add', 'dave', '--nickname', 'Dave'], other);
    assert.is(bundled.code, 0, bundled.stderr);
    assert.is(tsx.code, 0, tsx.stderr);
    const [a, b] = [bundled, tsx].map((r) => JSON.parse(r.stdout) as { id: string; username: string; token: string });
    assert.equal(Object.keys(a!), Object.keys(b!));
    assert.is(a!.username, 'dave');
    assert.match(a!.token, /^dpt_/);
    assert.match(b!.token, /^dpt_/);
    assert.is(
      bundled.stdout.replace(a!.id, 'ID').replace(a!.token, 'T'),
      tsx.stdout.replace(b!.id, 'ID').replace(b!.token, 'T'),
    );
    assert.is(normalised(bundled.stderr), normalised(tsx.stderr, other));
    const users = async (ws: Workspace, id: string) =>
      (await readFile(join(ws.dataDir, 'users.json'), 'utf8')).replace(id, 'ID');
    assert.is(await users(ctx.workspace, a!.id), await users(other, b!.id));
    assert.ok((await stat(join(ctx.workspace.distDir, 'current'))).isDirectory(), 'the bundled CLI rebuilt dist/');
    assert.ok((await readdir(ctx.workspace.storageDir)).length > 0, 'the token digest is stored');
  } finally {
    await other.remove();
  }
});

same.run();
