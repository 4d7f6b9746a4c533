import { existsSync } from 'node:fs';
import { readFile, readdir, readlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FormData, fetch } from 'undici';
import { makePluginJar } from '../build/plugin-jar.ts';
import type { PluginVersion } from '../server/versions/schema.ts';
import { makeWorkspace, runDepot, spawnOrigin, until, type OriginProcess, type Workspace } from './helpers.ts';

// Issue 30 items 2 to 4: publishing over HTTP against the origin as operators run it, with a token
// from `depot token add`: the same records as `depot release`, answered once served, and each refusal.

const ctx = {} as { workspace: Workspace; origin: OriginProcess; token: string; tokenId: string };

/** Its descriptors back every software these tests publish for (issue 31): Folia's key and Velocity's file. */
const jar = (version: string, filler = 0) =>
  makePluginJar({
    files: {
      'plugin.yml': `name: Published\nversion: ${version}\nmain: org.example.Published\nfolia-supported: true\n`,
      'velocity-plugin.json': JSON.stringify({ id: 'published', main: 'org.example.PublishedVelocity' }),
    },
    ...(filler ? { filler } : {}),
  });

function form(bytes: Uint8Array, fileName: string, metadata: unknown) {
  const body = new FormData();
  body.set('file', new Blob([Buffer.from(bytes)]), fileName);
  body.set('metadata', JSON.stringify(metadata));
  return body;
}

const bearer = (token = ctx.token) => ({ authorization: `Bearer ${token}` });

async function publish(body: FormData, headers: Record<string, string> = bearer()) {
  const response = await fetch(`${ctx.origin.url}/api/plugin-versions`, { method: 'POST', body, headers });
  return {
    response,
    body: (await response.json()) as { version: PluginVersion; error?: string } & Record<string, unknown>,
  };
}

async function patch(id: string, changes: unknown, headers: Record<string, string> = bearer()) {
  const response = await fetch(`${ctx.origin.url}/api/plugin-versions/${id}`, {
    method: 'PATCH',
    body: JSON.stringify(changes),
    headers: { 'content-type': 'application/json', ...headers },
  });
  return {
    response,
    body: (await response.json()) as { version: PluginVersion; error?: string } & Record<string, unknown>,
  };
}

const published = suite('POST and PATCH /api/plugin-versions with a publishing token');
published.before(async () => {
  ctx.workspace = await makeWorkspace();
  const added = await runDepot(
    ['token', 'add', 'alice', '--name', 'ci', '--scopes', 'publish,edit,withdraw', '--any-version'],
    ctx.workspace,
  );
  assert.is(added.code, 0, added.stderr);
  ({ token: ctx.token, id: ctx.tokenId } = JSON.parse(added.stdout) as { token: string; id: string });
  ctx.origin = await spawnOrigin(ctx.workspace);
});
published.after(async () => {
  // The last publish's build goes on after its answer: its lock is gone once it is done.
  await until(() => !existsSync(join(ctx.workspace.distDir, '.build.lock')), 'the last build', 120_000);
  ctx.origin.child.kill('SIGTERM');
  await ctx.origin.exited;
  await ctx.workspace.remove();
});

published('a 1 MB JAR is released and served by the time the answer comes: metadata and download', async () => {
  const bytes = jar('7.0.0', 1024 * 1024);
  const metadata = {
    pluginVersion: '7.0.0',
    javaVersion: 21,
    serverSoftware: ['PaperMC', 'Folia'],
    channel: 'release',
  };
  const { response, body } = await publish(
    form(bytes, 'Published-7.0.0.jar', { ...metadata, changelog: '## 7.0.0\n\n- Big.\n' }),
  );
  assert.is(response.status, 201, JSON.stringify(body));
  const { id } = body.version;
  assert.is(response.headers.get('location'), `/api/plugin-versions/${id}`);
  assert.equal(
    [body.version.pluginVersion, body.version.createdBy, body.version.fileName, body.version.fileSize],
    ['7.0.0', 'alice', 'Published-7.0.0.jar', bytes.length],
  );
  assert.is(body.version.changelog, '## 7.0.0\n\n- Big.\n');
  // Served at once: no waiting here.
  const own = await fetch(`${ctx.origin.url}/api/plugin-versions/${id}`);
  assert.is(own.status, 200);
  assert.equal(((await own.json()) as { version: PluginVersion }).version.id, id);
  const download = await fetch(`${ctx.origin.url}/api/plugin-versions/download/${id}`);
  assert.equal(Buffer.from(await download.arrayBuffer()), Buffer.from(bytes));
  const latest = (await (await fetch(`${ctx.origin.url}/api/plugin-versions/latest/papermc/21`)).json()) as {
    version: PluginVersion;
  };
  assert.is(latest.version.id, id);
  // Nothing of the upload is left in STORAGE_DIR/uploads.
  assert.equal(await readdir(join(ctx.workspace.storageDir, 'uploads')), []);
  // The audit log names the token's user and id, never the token: written once the command's build is done.
  let audit = '';
  await until(
    async () => (audit = (await runDepot(['audit', '--target', id], ctx.workspace)).stdout) !== '',
    'audit',
    60_000,
  );
  assert.match(audit, new RegExp(`"actor":"alice","tokenId":"${ctx.tokenId}"`));
  assert.not.ok(audit.includes(ctx.token));
});

published('the record is the one depot release writes for the same release', async () => {
  const bytes = jar('7.1.0');
  const { body } = await publish(
    form(bytes, 'Same-7.1.0.jar', {
      pluginVersion: '7.1.0',
      javaVersion: '17',
      serverSoftware: ['Velocity'],
      minecraftVersions: '1.20.6-1.21.4',
      proxyVersion: '3.4',
    }),
  );
  const record = JSON.parse(await readFile(join(ctx.workspace.dataDir, 'versions', `${body.version.id}.json`), 'utf8'));
  const cliJar = join(ctx.workspace.dir, 'Same-7.1.1.jar');
  await (await import('node:fs/promises')).writeFile(cliJar, jar('7.1.1'));
  const cli = await runDepot(
    [
      'release',
      cliJar,
      '--version',
      '7.1.1',
      '--java',
      '17',
      '--software',
      'Velocity',
      '--minecraft',
      '1.20.6-1.21.4',
      '--proxy',
      '3.4',
      '--by',
      'alice',
    ],
    ctx.workspace,
  );
  assert.is(cli.code, 0, cli.stderr);
  const cliRecord = JSON.parse(cli.stdout);
  const shape = (r: Record<string, unknown>) => {
    const {
      id: _i,
      createdAt: _c,
      updatedAt: _u,
      sha256: _s,
      fileSize: _f,
      fileName: _n,
      pluginVersion: _p,
      ...rest
    } = r;
    return rest;
  };
  assert.equal(Object.keys(record), Object.keys(cliRecord));
  assert.equal(shape(record), shape(cliRecord));
});

published('a retry with the same Idempotency-Key answers the release it made, once', async () => {
  const bytes = jar('7.2.0');
  const meta = { pluginVersion: '7.2.0', javaVersion: '21', serverSoftware: ['Purpur'] };
  const keyed = { ...bearer(), 'idempotency-key': 'ci-run-4711' };
  const first = await publish(form(bytes, 'Keyed-7.2.0.jar', meta), keyed);
  assert.is(first.response.status, 201, JSON.stringify(first.body));
  const retry = await publish(form(bytes, 'Keyed-7.2.0.jar', meta), keyed);
  assert.is(retry.response.status, 201, JSON.stringify(retry.body));
  assert.is(retry.response.headers.get('idempotent-replayed'), 'true');
  assert.is(retry.body.version.id, first.body.version.id);
  const other = await publish(form(bytes, 'Keyed-7.2.0.jar', { ...meta, channel: 'beta' }), keyed);
  assert.is(other.response.status, 422, JSON.stringify(other.body));
  const list = (await (await fetch(`${ctx.origin.url}/api/plugin-versions`)).json()) as { versions: PluginVersion[] };
  assert.is(list.versions.filter((v) => v.pluginVersion === '7.2.0').length, 1, 'released once');
});

published('refusals: each status names what to fix, and nothing is released', async () => {
  const before = (await readdir(join(ctx.workspace.dataDir, 'versions'))).length;
  const meta = { pluginVersion: '8.0.0', javaVersion: '21', serverSoftware: ['PaperMC'] };
  const noToken = await publish(form(jar('8.0.0'), 'A.jar', meta), {});
  assert.is(noToken.response.status, 401);
  assert.is(noToken.response.headers.get('www-authenticate'), 'Bearer');
  const wrong = await publish(form(jar('8.0.0'), 'A.jar', meta), bearer(`dpp_${'A'.repeat(43)}`));
  assert.is(wrong.response.status, 401);
  assert.is(wrong.body.error, noToken.body.error, 'one wording');
  const inQuery = await fetch(`${ctx.origin.url}/api/plugin-versions?token=${ctx.token}`, {
    method: 'POST',
    body: form(jar('8.0.0'), 'A.jar', meta),
    headers: bearer(),
  });
  assert.is(inQuery.status, 400);
  assert.not.ok((await inQuery.text()).includes(ctx.token));
  const badMeta = await publish(form(jar('8.0.0'), 'A.jar', { ...meta, javaVersion: '16' }));
  assert.is(badMeta.response.status, 400);
  assert.is(badMeta.body.field, 'javaVersion');
  const notJar = await publish(form(new TextEncoder().encode('not a zip'), 'A.jar', meta));
  assert.is(notJar.response.status, 422, JSON.stringify(notJar.body));
  const existing = (await (await fetch(`${ctx.origin.url}/api/plugin-versions/latest/papermc/21`)).json()) as {
    version: PluginVersion;
  };
  const duplicate = await publish(
    form(jar('8.0.0'), 'A.jar', {
      ...meta,
      pluginVersion: existing.version.pluginVersion,
      serverSoftware: existing.version.serverSoftware,
    }),
  );
  assert.is(duplicate.response.status, 409, JSON.stringify(duplicate.body));
  assert.is(duplicate.body.existingId, existing.version.id);
  const notMultipart = await fetch(`${ctx.origin.url}/api/plugin-versions`, {
    method: 'POST',
    body: JSON.stringify(meta),
    headers: { ...bearer(), 'content-type': 'application/json' },
  });
  assert.is(notMultipart.status, 415);
  assert.is((await readdir(join(ctx.workspace.dataDir, 'versions'))).length, before);
  for (const line of ctx.origin.stdout.concat(ctx.origin.stderr)) assert.not.ok(line.includes(ctx.token), line);
});

published(
  'a claim the JAR does not back: 400 naming serverSoftware and how to override; descriptorCheck false releases it with its warning',
  async () => {
    const meta = { pluginVersion: '8.5.0', javaVersion: '21', serverSoftware: ['BungeeCord'] };
    const refused = await publish(form(jar('8.5.0'), 'Bungee.jar', meta));
    assert.is(refused.response.status, 400, JSON.stringify(refused.body));
    assert.is(refused.body.field, 'serverSoftware');
    assert.match(refused.body.error!, /--software BungeeCord: .*"descriptorCheck": false in the metadata\)$/);
    const released = await publish(form(jar('8.5.0'), 'Bungee.jar', { ...meta, descriptorCheck: false }));
    assert.is(released.response.status, 201, JSON.stringify(released.body));
    const warnings = (released.body.version as PluginVersion & { descriptorWarnings?: string[] }).descriptorWarnings;
    assert.equal(warnings?.length, 1);
    assert.match(warnings![0]!, /--software BungeeCord/);
    const bad = await publish(form(jar('8.5.1'), 'Bungee.jar', { ...meta, descriptorCheck: 'no' }));
    assert.is(bad.response.status, 400);
    assert.is(bad.body.field, 'descriptorCheck');
  },
);

published('hostile text: kept as written where the rules allow it, refused naming the field where not', async () => {
  const latest = (await (await fetch(`${ctx.origin.url}/api/plugin-versions/latest/papermc/21`)).json()) as {
    version: PluginVersion;
  };
  const target = latest.version.id;
  const before = (await readdir(join(ctx.workspace.dataDir, 'versions'))).length;
  // A lone surrogate: no UTF-8 file holds one, so it is refused, never written as U+FFFD.
  const meta = { pluginVersion: '8.5.0', javaVersion: '21', serverSoftware: ['PaperMC'] };
  const lone = await publish(form(jar('8.5.0'), 'H.jar', { ...meta, changelog: 'fixed \uD800 here' }));
  assert.is(lone.response.status, 400, JSON.stringify(lone.body));
  assert.is(lone.body.field, 'changelog');
  const loneEdit = await patch(target, { changelog: 'fixed \uDC00 here' });
  assert.is(loneEdit.response.status, 400);
  assert.is(loneEdit.body.field, 'changelog');
  // A bidi override in a reason, a 1 MB field.
  const bidi = await patch(target, { withdrawn: { reason: 'safe \u202Eelif.jar' } });
  assert.is(bidi.response.status, 400);
  assert.is(bidi.body.field, 'withdrawn');
  const huge = await patch(target, { changelog: 'x'.repeat(1024 * 1024) });
  assert.is(huge.response.status, 413, 'a PATCH body is read up to 256 KiB, not whole');
  assert.is((await readdir(join(ctx.workspace.dataDir, 'versions'))).length, before);
  // ']]>' twice and a shell variable are text: kept as written.
  const notes = '## Notes ]]> and ]]> again, $HOME and ${USER}\n';
  const kept = await patch(target, { changelog: notes });
  assert.is(kept.response.status, 200, JSON.stringify(kept.body));
  assert.is(kept.body.version.changelog, notes);
  const feed = await (await fetch(`${ctx.origin.url}/api/plugin-versions/feed.atom`)).text();
  assert.is(feed.split('<![CDATA[').length, feed.split(']]>').length, 'no section is broken out of');
});

published('PATCH withdraws (latest moves), restores and edits, as the CLI does', async () => {
  const latest = async () =>
    (
      (await (await fetch(`${ctx.origin.url}/api/plugin-versions/latest/papermc/21`)).json()) as {
        version: PluginVersion;
      }
    ).version;
  const target = (await latest()).id;
  const withdrawn = await patch(target, { withdrawn: { reason: 'corrupts worlds' } });
  assert.is(withdrawn.response.status, 200, JSON.stringify(withdrawn.body));
  assert.equal(
    [withdrawn.body.version.withdrawn?.reason, withdrawn.body.version.withdrawn?.by],
    ['corrupts worlds', 'alice'],
  );
  assert.is.not((await latest()).id, target, 'latest moved once answered');
  const restored = await patch(target, { withdrawn: null });
  assert.is(restored.response.status, 200);
  assert.is(restored.body.version.withdrawn, undefined);
  assert.is((await latest()).id, target);
  const edited = await patch(target, { channel: 'beta', proxyVersion: '3.4' });
  assert.equal([edited.body.version.channel, edited.body.version.proxyVersion], ['beta', '3.4']);
  assert.is.not((await latest()).id, target);
  await patch(target, { channel: 'release' });
  const again = await patch(target, { withdrawn: null });
  assert.is(again.response.status, 409, 'restoring what is not withdrawn');
  assert.is((await patch('plugin-1-abc', { channel: 'beta' })).response.status, 404);
  assert.is((await patch(target, { fileName: 'x.jar' })).response.status, 400);
  assert.is((await patch(target, {})).response.status, 400);
  const notJson = await fetch(`${ctx.origin.url}/api/plugin-versions/${target}`, {
    method: 'PATCH',
    body: 'channel=beta',
    headers: { ...bearer(), 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.is(notJson.status, 415);
  assert.is((await patch(target, { channel: 'beta' }, {})).response.status, 401);
});

const limited = suite("publishing and SPEC 8's limit");
limited.before(async () => {
  ctx.workspace = await makeWorkspace();
  const added = await runDepot(['token', 'add', 'bob'], ctx.workspace);
  ({ token: ctx.token } = JSON.parse(added.stdout) as { token: string });
  ctx.origin = await spawnOrigin(ctx.workspace, { RATE_LIMIT: '3/15m' });
});
limited.after(async () => {
  await until(() => !existsSync(join(ctx.workspace.distDir, '.build.lock')), 'the last build', 120_000);
  ctx.origin.child.kill('SIGTERM');
  await ctx.origin.exited;
  await ctx.workspace.remove();
});

limited('failed authentications count like any request; publishes do not', async () => {
  const meta = (version: string) => ({ pluginVersion: version, javaVersion: '21', serverSoftware: ['PaperMC'] });
  // Four publishes: over a limit of three requests, none of them counted.
  for (const version of ['9.0.0', '9.0.1', '9.0.2', '9.0.3']) {
    const { response, body } = await publish(form(jar(version), `L-${version}.jar`, meta(version))).catch(
      (e: Error) => {
        throw new Error(`${version}: ${e.message} ${String((e as { cause?: unknown }).cause)}`);
      },
    );
    assert.is(response.status, 201, `${version} ${JSON.stringify(body)}`);
  }
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++)
    statuses.push((await publish(form(jar('9.1.0'), 'L.jar', meta('9.1.0')), bearer('dpp_wrong'))).response.status);
  assert.equal(statuses, [401, 401, 401, 429]);
  const list = await fetch(`${ctx.origin.url}/api/plugin-versions`);
  assert.is(list.status, 429, 'the same budget as every limited request');
  await list.arrayBuffer();
});

const deployed = suite('AFTER_SWAP on a publish');
deployed.before(async () => {
  ctx.workspace = await makeWorkspace();
  const added = await runDepot(['token', 'add', 'carol', '--scopes', 'publish,edit'], ctx.workspace);
  ({ token: ctx.token } = JSON.parse(added.stdout) as { token: string });
  const marker = join(ctx.workspace.dir, 'deployed.txt');
  // Fails on the second run: the answer says so.
  const command = `test ! -e '${marker}' || exit 3; printf '%s' "$DEPOT_TREE" > '${marker}'`;
  ctx.origin = await spawnOrigin(ctx.workspace, { AFTER_SWAP: command });
});
deployed.after(async () => {
  await until(() => !existsSync(join(ctx.workspace.distDir, '.build.lock')), 'the last build', 120_000);
  ctx.origin.child.kill('SIGTERM');
  await ctx.origin.exited;
  await ctx.workspace.remove();
});

deployed('runs on the tree that serves the change; the answer waits and says how it went', async () => {
  const meta = { pluginVersion: '9.5.0', javaVersion: '21', serverSoftware: ['Spigot'] };
  const first = await publish(form(jar('9.5.0'), 'D-9.5.0.jar', meta));
  assert.is(first.response.status, 201, JSON.stringify(first.body));
  assert.equal(first.body.deploy, { ok: true, exitCode: 0 });
  const tree = await readFile(join(ctx.workspace.dir, 'deployed.txt'), 'utf8');
  assert.match(tree, /\/dist\/trees\/[^/]+$/);
  assert.ok(existsSync(join(tree, 'manifest.json')), 'DEPOT_TREE names a tree');
  const second = await patch(first.body.version.id, { channel: 'beta' });
  assert.is(second.response.status, 200);
  assert.equal(second.body.deploy, { ok: false, exitCode: 3 }, 'a failure is said, the change still made');
  assert.is(second.body.version.channel, 'beta');
});

const followed = suite('AFTER_SWAP after each swap a publish makes');
followed.before(async () => {
  ctx.workspace = await makeWorkspace();
  const added = await runDepot(['token', 'add', 'alice'], ctx.workspace);
  ({ token: ctx.token } = JSON.parse(added.stdout) as { token: string });
  const runs = join(ctx.workspace.dir, 'runs.txt');
  // Start and end markers around a pause: two runs at once would interleave them.
  const command = `echo "start $DEPOT_TREE" >> '${runs}'; echo copying; sleep 0.3; echo "end $DEPOT_TREE" >> '${runs}'`;
  ctx.origin = await spawnOrigin(ctx.workspace, { AFTER_SWAP: command });
});
followed.after(async () => {
  await until(() => !existsSync(join(ctx.workspace.distDir, '.build.lock')), 'the last build', 120_000);
  ctx.origin.child.kill('SIGTERM');
  await ctx.origin.exited;
  await ctx.workspace.remove();
});

followed('the tree served at the end is the last one copied; runs never overlap; logged at info', async () => {
  const meta = (version: string) => ({ pluginVersion: version, javaVersion: '21', serverSoftware: ['PaperMC'] });
  const answers = await Promise.all(
    ['9.6.0', '9.6.1'].map((version) => publish(form(jar(version), `F-${version}.jar`, meta(version)))),
  );
  for (const { response, body } of answers) {
    assert.is(response.status, 201, JSON.stringify(body));
    assert.equal(body.deploy, { ok: true, exitCode: 0 });
  }
  await until(() => !existsSync(join(ctx.workspace.distDir, '.build.lock')), 'the full builds', 120_000);
  const served = resolve(ctx.workspace.distDir, await readlink(join(ctx.workspace.distDir, 'current')));
  const runs = async () => (await readFile(join(ctx.workspace.dir, 'runs.txt'), 'utf8')).trim().split('\n');
  await until(
    async () => (await runs()).at(-1) === `end ${served}`,
    'AFTER_SWAP on the tree served at the end',
    20_000,
  );
  const lines = await runs();
  assert.ok(lines.length >= 6, `the two answers' runs and at least one after the builds: ${lines.join(' | ')}`);
  lines.forEach((line, i) =>
    assert.is(line, `${i % 2 ? 'end' : 'start'} ${lines[i - (i % 2)]!.slice('start '.length)}`, 'one run at a time'),
  );
});

followed("the publish's progress and AFTER_SWAP's output are logged at info, not warn", () => {
  const logged = ctx.origin.stdout.flatMap((line) => {
    const entry = JSON.parse(line) as { level?: string; msg?: string };
    return typeof entry.msg === 'string' ? [entry as { level: string; msg: string }] : [];
  });
  const level = (pattern: RegExp) => [...new Set(logged.filter((e) => pattern.test(e.msg)).map((e) => e.level))];
  assert.equal(level(/^\[after-swap\] copying$/), ['info'], "AFTER_SWAP's output");
  assert.equal(level(/^\[after-swap\] AFTER_SWAP exited 0/), ['info'], 'a run that went well');
  assert.equal(level(/^\[build\]/), ['info'], "the publish's build progress");
});

published.run();
limited.run();
deployed.run();
followed.run();
