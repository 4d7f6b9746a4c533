import { readFile, readdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PluginVersionRecord, type PluginVersion, type UpdateCheck } from '../server/versions/schema.ts';
import {
  makeWorkspace,
  runBuildCommand,
  runDepot,
  snapshotFiles,
  spawnScript,
  snapshotTree,
  startTestOrigin,
  until,
  type Workspace,
} from './helpers.ts';
import type { RunningOrigin } from '../server/origin.ts';

// Issue 29 items 2, 3 and 7: `depot withdraw`, `restore` and `edit`, run as an operator runs them,
// against an origin serving the workspace's tree the whole time.

const ctx = {} as { workspace: Workspace; origin: RunningOrigin };

const getJson = async <T>(path: string): Promise<{ status: number; body: T }> => {
  const response = await fetch(`${ctx.origin.url}${path}`);
  return { status: response.status, body: (await response.json()) as T };
};
const latestId = async (path: string) => (await getJson<{ version: PluginVersion }>(path)).body.version?.id;

async function depot(args: string[]) {
  const result = await runDepot(args, ctx.workspace);
  assert.is(result.code, 0, `depot ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

/** The origin follows dist/current: the CLI has returned once its change is served, so this waits a watch tick at most. */
const served = (condition: () => Promise<boolean>, what: string) => until(condition, what, 5_000);

const lifecycle = suite('depot withdraw, restore and edit');
lifecycle.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await startTestOrigin(ctx.workspace);
});
lifecycle.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});

lifecycle(
  'a withdrawn version leaves every latest, resolve and update-check answer, and comes back on restore',
  async () => {
    const target = (await latestId('/api/plugin-versions/latest/papermc/17'))!;
    const before = (await getJson<{ version: PluginVersion }>(`/api/plugin-versions/${target}`)).body.version;
    const withdrawn = await depot(['withdraw', target, '--reason', 'corrupts worlds on 1.21.4', '--by', 'alice']);
    assert.equal(withdrawn.withdrawn, { reason: 'corrupts worlds on 1.21.4', at: withdrawn.updatedAt, by: 'alice' });
    await served(async () => (await latestId('/api/plugin-versions/latest/papermc/17')) !== target, 'the withdrawal');

    const own = (await getJson<{ version: PluginVersion }>(`/api/plugin-versions/${target}`)).body.version;
    assert.equal(own.withdrawn, withdrawn.withdrawn);
    assert.ok(Object.values(own.isLatest).every((latest) => latest === false));
    const list = (await getJson<{ versions: PluginVersion[] }>('/api/plugin-versions')).body.versions;
    assert.equal(list.find((v) => v.id === target)?.withdrawn, withdrawn.withdrawn);
    for (const channel of ['release', 'beta', 'alpha'])
      for (const path of [
        `/api/plugin-versions/latest/papermc?channel=${channel}`,
        `/api/plugin-versions/latest/papermc/21?channel=${channel}`,
        `/api/plugin-versions/resolve/purpur/21?channel=${channel}`,
        `/api/plugin-versions/resolve/papermc?channel=${channel}`,
      ])
        assert.is.not(await latestId(path), target, path);
    for (const path of [
      '/api/plugin-versions/download/latest/papermc/21',
      '/api/plugin-versions/download/resolve/papermc/21',
    ]) {
      const response = await fetch(`${ctx.origin.url}${path}`);
      await response.arrayBuffer();
      assert.is.not(response.headers.get('etag'), `"${before.sha256}"`, path);
    }
    const check = (await getJson<UpdateCheck>(`/api/plugin-versions/update-check/papermc/21/0.1.0`)).body;
    assert.is.not(check.latest.id, target);
    // Still downloadable by its id: servers pin versions.
    const download = await fetch(`${ctx.origin.url}/api/plugin-versions/download/${target}`);
    assert.is(download.status, 200);
    assert.is(download.headers.get('etag'), `"${before.sha256}"`);
    await download.arrayBuffer();

    // With that Java 17 build withdrawn too, nothing qualifies on Java 17: SPEC's 404.
    const older = (await latestId('/api/plugin-versions/latest/papermc/17'))!;
    await depot(['withdraw', older, '--reason', 'same bug']);
    await served(async () => (await getJson('/api/plugin-versions/latest/papermc/17')).status === 404, 'a 404');
    // Resolve takes Java as a minimum: the Java 11 build is the one left.
    const resolved = await getJson<{ version: PluginVersion }>('/api/plugin-versions/resolve/papermc/17');
    assert.is(resolved.body.version.pluginVersion, '1.1.0');
    await depot(['restore', older]);

    const restored = await depot(['restore', target, '--by', 'bob']);
    assert.is(restored.withdrawn, undefined);
    await served(async () => (await latestId('/api/plugin-versions/latest/papermc/17')) === target, 'the restore');
    const back = (await getJson<{ version: PluginVersion }>(`/api/plugin-versions/${target}`)).body.version;
    const { updatedAt, ...rest } = back;
    assert.equal(rest, (({ updatedAt: _u, ...kept }) => kept)(before));
    assert.ok(updatedAt > before.updatedAt, 'updatedAt moves');
    assert.is(await latestId('/api/plugin-versions/resolve/purpur/17'), target);
  },
);

lifecycle('edit changes what the JAR does not fix; a channel change moves latest', async () => {
  const target = (await latestId('/api/plugin-versions/latest/papermc'))!;
  const before = (await getJson<{ version: PluginVersion }>(`/api/plugin-versions/${target}`)).body.version;
  const notes = join(ctx.workspace.dir, 'notes.md');
  await writeFile(notes, '# Fixed\n\nNo more lost chunks.\n');
  const edited = await depot([
    ...['edit', target, '--channel', 'beta', '--changelog', notes],
    ...['--minecraft', '1.20.6-1.21.4', '--proxy', '3.4', '--by', 'carol'],
  ]);
  assert.is(edited.channel, 'beta');
  await served(async () => (await latestId('/api/plugin-versions/latest/papermc')) !== target, 'the edit');
  assert.is(await latestId('/api/plugin-versions/latest/papermc?channel=beta'), target);
  const after = (await getJson<{ version: PluginVersion }>(`/api/plugin-versions/${target}`)).body.version;
  for (const field of ['id', 'fileName', 'fileSize', 'sha256', 'sha512', 'createdAt', 'downloadUrl'] as const)
    assert.is(after[field], before[field], field);
  assert.ok(after.updatedAt > before.updatedAt);
  assert.is(after.changelog, '# Fixed\n\nNo more lost chunks.\n');
  assert.equal(after.minecraftVersions, [{ from: '1.20.6', to: '1.21.4' }]);
  assert.is(after.minecraftVersion, '1.21.4');
  assert.is(after.proxyVersion, '3.4');
  assert.is(
    await readFile(join(ctx.workspace.dataDir, 'versions', `${target}.md`), 'utf8'),
    '# Fixed\n\nNo more lost chunks.\n',
  );

  await depot(['edit', target, '--channel', 'release']);
  await served(async () => (await latestId('/api/plugin-versions/latest/papermc')) === target, 'the edit back');
});

lifecycle('each change is in the audit log with its actor', async () => {
  const result = await runDepot(['audit'], ctx.workspace);
  const records = result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { action: string; actor: string; changes: Record<string, unknown> });
  const lifecycleRecords = records.filter((r) => ['alice', 'bob', 'carol'].includes(r.actor));
  assert.equal(
    lifecycleRecords.map((r) => [r.action, r.actor]),
    [
      ['withdraw', 'alice'],
      ['restore', 'bob'],
      ['edit', 'carol'],
    ],
  );
  assert.equal(lifecycleRecords[0]!.changes, { reason: 'corrupts worlds on 1.21.4' });
  assert.equal(lifecycleRecords[2]!.changes, {
    channel: 'beta',
    proxyVersion: '3.4',
    minecraftVersion: '1.21.4',
    minecraftVersions: [{ from: '1.20.6', to: '1.21.4' }],
    changelog: 'replaced (30 bytes)',
  });
});

lifecycle(
  'refusals, and a withdrawal or edit that changes nothing, leave data/ and the served tree byte-identical',
  async () => {
    const target = (await latestId('/api/plugin-versions/latest/papermc'))!;
    await depot(['withdraw', target, '--reason', 'bad build']);
    const current = await realpath(join(ctx.workspace.distDir, 'current'));
    const [data, tree] = [await snapshotFiles(ctx.workspace.dataDir), await snapshotTree(current)];
    const refused: [string[], RegExp][] = [
      [['withdraw', 'plugin-1-abc', '--reason', 'x'], /^depot withdraw: no version plugin-1-abc in /],
      [['withdraw', '../../etc/passwd', '--reason', 'x'], /^depot withdraw: must be a version id such as /],
      [['withdraw', target], /^depot withdraw: --reason: is required: say why, in 1 to 500 characters/],
      [['withdraw', target, '--reason', 'x'.repeat(501)], /^depot withdraw: --reason: must be 1 to 500 characters$/],
      [['withdraw', target, '--reason', 'two\nlines'], /^depot withdraw: --reason: .*U\+000A/],
      [['withdraw', target, '--reason', ''], /^depot withdraw: --reason: must be 1 to 500 characters$/],
      [['restore', target.replace(/-\w+$/, '-ffffff')], /^depot restore: no version /],
      [['edit', target, '--java', '17'], /^depot edit: --java: cannot change: the JAR fixes it; release a new version/],
      [['edit', target, '--version=9.9.9'], /^depot edit: --version: cannot change: the JAR fixes it/],
      [['edit', target, '--software', 'Spigot'], /^depot edit: --software: cannot change/],
      [['edit', target, '--channel', 'gamma'], /^depot edit: --channel: must be one of release, beta, alpha$/],
      [['edit', target], /^depot edit: nothing to change: give --channel, --changelog, --minecraft or --proxy$/],
      [['edit', target, '--minecraft', '1.21.4-1.20'], /^depot edit: --minecraft: /],
      [
        ['edit', target, '--changelog', join(ctx.workspace.dir, 'missing.md')],
        /^depot edit: --changelog: cannot read /,
      ],
    ];
    for (const [args, message] of refused) {
      const result = await runDepot(args, ctx.workspace);
      assert.is(result.code, 1, `depot ${args.join(' ')} should be refused: ${result.stdout}`);
      assert.match(result.stderr.trim(), message);
      assert.is(result.stderr.trim().split('\n').length, 1, result.stderr);
    }
    assert.equal(await snapshotFiles(ctx.workspace.dataDir), data);
    assert.equal(await snapshotTree(await realpath(join(ctx.workspace.distDir, 'current'))), tree);

    const restoreTwice = await runDepot(['restore', target], ctx.workspace);
    assert.is(restoreTwice.code, 0, restoreTwice.stderr);
    const notWithdrawn = await runDepot(['restore', target], ctx.workspace);
    assert.is(notWithdrawn.code, 1);
    assert.match(notWithdrawn.stderr, /is not withdrawn; nothing to restore/);
    await depot(['withdraw', target, '--reason', 'bad build']);
    const [data2, tree2] = [
      await snapshotFiles(ctx.workspace.dataDir),
      await snapshotTree(await realpath(join(ctx.workspace.distDir, 'current'))),
    ];
    // Withdrawing what already is, or an edit to what it already has: exit 0, said so, nothing written.
    for (const args of [
      ['withdraw', target, '--reason', 'another reason'],
      ['edit', target, '--channel', 'release'],
    ]) {
      const result = await runDepot(args, ctx.workspace);
      assert.is(result.code, 0, result.stderr);
      assert.equal(JSON.parse(result.stdout), { id: target, unchanged: true });
      assert.match(result.stderr, /already/);
    }
    assert.equal(await snapshotFiles(ctx.workspace.dataDir), data2);
    assert.equal(await snapshotTree(await realpath(join(ctx.workspace.distDir, 'current'))), tree2);
  },
);

const killed = suite('depot withdraw killed with SIGKILL');
killed.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await startTestOrigin(ctx.workspace);
});
killed.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});

killed('at any step leaves a whole record, and the next build serves what data/ says', async () => {
  const target = (await latestId('/api/plugin-versions/latest/papermc'))!;
  const recordFile = join(ctx.workspace.dataDir, 'versions', `${target}.json`);
  // Before the record is written (staging the delta tree follows it), once the change is served, while the rest builds.
  for (const line of ['[build] stage:', '[build] swap:', '[build] load:', '[build] prerender:']) {
    const child = spawnScript(
      'build/cli/depot.ts',
      ['withdraw', target, '--reason', `killed at ${line}`],
      ctx.workspace,
    );
    try {
      await until(() => child.stderr().includes(line), `the withdraw reaches ${line}`, 60_000);
    } finally {
      child.child.kill('SIGKILL');
      await child.exited;
    }
    const record = PluginVersionRecord.parse(JSON.parse(await readFile(recordFile, 'utf8')));
    const servedNow = (await getJson<{ version: PluginVersion }>(`/api/plugin-versions/${target}`)).body.version;
    // What the origin answers is never a withdrawal data/ lacks: the record is written before its delta tree.
    if (servedNow.withdrawn) assert.equal(servedNow.withdrawn, record.withdrawn);
    const build = await runBuildCommand(ctx.workspace);
    assert.is(build.code, 0, build.stderr);
    await served(
      async () =>
        JSON.stringify(
          (await getJson<{ version: PluginVersion }>(`/api/plugin-versions/${target}`)).body.version.withdrawn,
        ) === JSON.stringify(record.withdrawn),
      'the build serves data/',
    );
    // The next command sweeps what a killed writer left (a temporary file naming its pid); restore for the next round.
    const restored = await runDepot(['restore', target], ctx.workspace);
    assert.is(restored.code, record.withdrawn ? 0 : 1, restored.stderr);
    const leftovers = (await readdir(join(ctx.workspace.dataDir, 'versions'))).filter(
      (name) => !/\.(json|md)$/.test(name),
    );
    assert.equal(leftovers, [], 'no temporary file left in data/versions');
  }
});

lifecycle(
  'a reason is text: "]]>" twice and shell variables kept as written; a bidi override or 120 KB refused',
  async () => {
    const target = (await latestId('/api/plugin-versions/latest/papermc'))!;
    for (const [reason, message] of [
      ['safe \u202Eelif.jar', /^depot withdraw: --reason: .*U\+202E/],
      // The longest one argument the kernel passes (128 KiB each): a megabyte cannot reach the CLI at all.
      ['x'.repeat(120_000), /^depot withdraw: --reason: must be 1 to 500 characters$/],
    ] as const) {
      const result = await runDepot(['withdraw', target, '--reason', reason], ctx.workspace);
      assert.is(result.code, 1);
      assert.match(result.stderr.trim(), message);
    }
    const reason = 'breaks ]]> twice ]]> with $HOME and ${USER}';
    const withdrawn = await depot(['withdraw', target, '--reason', reason]);
    assert.is((withdrawn.withdrawn as { reason: string }).reason, reason);
    const own = async () => (await getJson<{ version: PluginVersion }>(`/api/plugin-versions/${target}`)).body.version;
    await served(async () => (await own()).withdrawn?.reason === reason, 'the withdrawal');
    const audit = await runDepot(['audit', '--target', target], ctx.workspace);
    const last = JSON.parse(audit.stdout.trim().split('\n').at(-1)!) as { changes: { reason: string } };
    assert.is(last.changes.reason, reason);
    const feed = await (await fetch(`${ctx.origin.url}/api/plugin-versions/feed.atom`)).text();
    assert.is(feed.split('<![CDATA[').length, feed.split(']]>').length, 'no CDATA section is broken out of');
    await depot(['restore', target]);
  },
);

lifecycle.run();
killed.run();
