import { execFile } from 'node:child_process';
import { readFile, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FormData, fetch } from 'undici';
import { acquireBuildLock } from '../build/build-lock.ts';
import { makePluginJar } from '../build/plugin-jar.ts';
import type { PluginVersion } from '../server/versions/schema.ts';
import {
  makeWorkspace,
  runDepot,
  spawnOrigin,
  startPublishing,
  stopPublishing,
  until,
  type OriginProcess,
  type Workspace,
} from './helpers.ts';
import { fillDisk, mountSmallDisk, type SmallDisk } from './small-disk.ts';

const run = promisify(execFile);

// Issue 41: the HTTP door makes its changes through the typed actions, in one build worker: a 2xx is
// audited before it is sent, a PATCH is whole or not at all, publishes are bounded, and refusals
// name neither the server's disk nor a CLI flag.

const ctx = {} as { workspace: Workspace; origin: OriginProcess; token: string };

const jar = (version: string) =>
  makePluginJar({
    files: { 'plugin.yml': `name: Changed\nversion: ${version}\nmain: org.example.Changed\n` },
  });

function form(version: string, metadata: Record<string, unknown> = {}) {
  const body = new FormData();
  body.set('file', new Blob([Buffer.from(jar(version))]), `Changed-${version}.jar`);
  body.set(
    'metadata',
    JSON.stringify({ pluginVersion: version, javaVersion: 21, serverSoftware: ['PaperMC'], ...metadata }),
  );
  return body;
}

type Answer = { status: number; headers: Headers; body: { version: PluginVersion; error?: string; field?: string } };

async function send(
  path: string,
  init: { method: string; body: FormData | string },
  token = ctx.token,
): Promise<Answer> {
  const json = typeof init.body === 'string' ? { 'content-type': 'application/json' } : {};
  const response = await fetch(`${ctx.origin.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...json },
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Answer['body'] };
}

const publish = (body: FormData, token?: string) => send('/api/plugin-versions', { method: 'POST', body }, token);
const patch = (id: string, changes: unknown) =>
  send(`/api/plugin-versions/${id}`, { method: 'PATCH', body: JSON.stringify(changes) });

/** The pids of a process's children (Linux's /proc). */
async function childrenOf(pid: number): Promise<number[]> {
  const tasks = await readdir(`/proc/${pid}/task`);
  const lists = await Promise.all(
    tasks.map((task) => readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '')),
  );
  return lists.flatMap((list) => list.split(' ').filter(Boolean).map(Number));
}

const rssMiB = async (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** The origin and its build worker (its child) killed at once, as a machine's crash would. */
async function killOriginAndWorker() {
  for (const pid of await childrenOf(ctx.origin.child.pid!)) process.kill(pid, 'SIGKILL');
  ctx.origin.child.kill('SIGKILL');
  await ctx.origin.exited;
}

async function start() {
  ctx.origin = await spawnOrigin(ctx.workspace);
}

const changes = suite('publishing through the typed changes');
changes.before(async () => {
  Object.assign(ctx, await startPublishing());
});
changes.after(() => stopPublishing(ctx));

changes('a PATCH refused in part changes nothing: the channel stays, in data/ and served', async () => {
  const released = await publish(form('41.0.0'));
  assert.is(released.status, 201, released.body.error);
  const { id } = released.body.version;
  const record = join(ctx.workspace.dataDir, 'versions', `${id}.json`);
  const before = await readFile(record, 'utf8');
  const refused = await patch(id, { channel: 'alpha', withdrawn: null });
  assert.is(refused.status, 409, refused.body.error);
  assert.match(refused.body.error!, /is not withdrawn; nothing to restore/);
  assert.is(await readFile(record, 'utf8'), before, 'the record in data/');
  const served = await fetch(`${ctx.origin.url}/api/plugin-versions/${id}`);
  assert.is(((await served.json()) as { version: PluginVersion }).version.channel, 'release');
  // Both parts that can be made are made as one change: one record, both fields.
  const both = await patch(id, { channel: 'beta', withdrawn: { reason: 'both at once' } });
  assert.is(both.status, 200, both.body.error);
  assert.is(both.body.version.channel, 'beta');
  assert.is(both.body.version.withdrawn?.reason, 'both at once');
});

changes('refusals name the field, never a path of the server or a CLI flag', async () => {
  const many = await publish(form('41.1.0', { serverSoftware: Array.from({ length: 20_000 }, () => 'PaperMC') }));
  assert.is(many.status, 400);
  assert.is(many.body.field, 'serverSoftware');
  const unknown = await patch('plugin-1-ffffffffff', { channel: 'beta' });
  assert.is(unknown.status, 404);
  const badChangelog = await patch('plugin-1-ffffffffff', { changelog: '\ud800 lone' });
  for (const answer of [many, unknown, badChangelog]) {
    assert.not.match(answer.body.error!, ctx.workspace.dir);
    assert.not.match(answer.body.error!, /--[a-z]/);
  }
});

changes("a token does only what its scopes say, on its user's versions unless made with --any-version", async () => {
  const tokenOf = async (...args: string[]) => {
    const added = await runDepot(['token', 'add', 'alice', ...args], ctx.workspace);
    assert.is(added.code, 0, added.stderr);
    return (JSON.parse(added.stdout) as { token: string }).token;
  };
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  const patchAs = async (token: string, id: string, body: unknown) => {
    const response = await fetch(`${ctx.origin.url}/api/plugin-versions/${id}`, {
      method: 'PATCH',
      body: JSON.stringify(body),
      headers: { ...as(token), 'content-type': 'application/json' },
    });
    return { status: response.status, body: (await response.json()) as { error?: string; scope?: string } };
  };
  const publishOnly = await tokenOf('--name', 'publish-only');
  const posted = await fetch(`${ctx.origin.url}/api/plugin-versions`, {
    method: 'POST',
    body: form('41.4.0'),
    headers: as(publishOnly),
  });
  assert.is(posted.status, 201);
  const { id } = ((await posted.json()) as { version: PluginVersion }).version;
  const noEdit = await patchAs(publishOnly, id, { channel: 'beta' });
  assert.is(noEdit.status, 403);
  assert.is(noEdit.body.scope, 'edit');
  assert.match(noEdit.body.error!, /lacks the scope "edit" \(it has publish\).*--scopes publish,edit$/);
  const editor = await tokenOf('--scopes', 'publish,edit');
  assert.is((await patchAs(editor, id, { channel: 'beta' })).status, 200);
  const noWithdraw = await patchAs(editor, id, { channel: 'alpha', withdrawn: { reason: 'no' } });
  assert.is(noWithdraw.status, 403);
  assert.is(noWithdraw.body.scope, 'withdraw');
  // A demo version bob released.
  const bobs = 'plugin-1768910400000-7df86bd75d';
  const foreign = await patchAs(editor, bobs, { channel: 'beta' });
  assert.is(foreign.status, 403);
  assert.match(foreign.body.error!, /only the versions alice released.*--any-version/);
  // A token made before scopes keeps publish, edit and withdraw on alice's versions, and says so.
  const legacy = await tokenOf('--name', 'legacy');
  const folder = join(ctx.workspace.storageDir, 'publish-tokens');
  for (const name of await readdir(folder)) {
    const record = JSON.parse(await readFile(join(folder, name), 'utf8')) as Record<string, unknown>;
    if (record.name !== 'legacy') continue;
    delete record.scopes;
    delete record.anyVersion;
    await writeFile(join(folder, name), JSON.stringify(record));
  }
  const listed = await runDepot(['token', 'list'], ctx.workspace);
  const tokens = (JSON.parse(listed.stdout) as { tokens: Record<string, unknown>[] }).tokens;
  const byName = Object.fromEntries(tokens.map((token) => [token.name, token]));
  assert.equal(byName['publish-only']!.scopes, ['publish']);
  assert.equal(byName['legacy']!.scopes, ['publish', 'edit', 'withdraw']);
  assert.match(String(byName['legacy']!.scopesNote), /made before scopes/);
  assert.is((await patchAs(legacy, id, { withdrawn: { reason: 'legacy can' } })).status, 200);
  assert.is((await patchAs(legacy, bobs, { withdrawn: { reason: 'not bob' } })).status, 403);
  const audit = await runDepot(['audit', '--target', id], ctx.workspace);
  const edit = audit.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { action: string; changes: Record<string, unknown> })
    .find((record) => record.action === 'edit');
  assert.equal(edit?.changes.tokenScopes, ['publish', 'edit'], 'the audit names the scopes');
});

changes(
  'a release answered 201 and a PATCH answered 200 are audited and served, even when the origin and its worker are killed right after',
  async () => {
    const audited = async (id: string) => {
      const audit = await runDepot(['audit', '--target', id], ctx.workspace);
      assert.is(audit.code, 0, audit.stderr);
      return audit.stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { action: string; actor: string; tokenId?: string });
    };
    const released = await publish(form('41.2.0'));
    assert.is(released.status, 201, released.body.error);
    const { id } = released.body.version;
    await killOriginAndWorker();
    const records = await audited(id);
    assert.equal(
      records.map((record) => record.action),
      ['release'],
    );
    assert.is(records[0]!.actor, 'alice');
    assert.match(records[0]!.tokenId!, /^tok_[0-9a-f]{12}$/);
    // The kill may have left the build lock; the next start takes it over. The release is served.
    await start();
    const served = await fetch(`${ctx.origin.url}/api/plugin-versions/${id}`);
    assert.is(served.status, 200, 'served after the restart');
    // The other kind of change, through the same door.
    const edited = await patch(id, { channel: 'beta' });
    assert.is(edited.status, 200, edited.body.error);
    await killOriginAndWorker();
    assert.equal(
      (await audited(id)).map((record) => record.action),
      ['release', 'edit'],
    );
    await start();
    const after = await fetch(`${ctx.origin.url}/api/plugin-versions/${id}`);
    assert.is(((await after.json()) as { version: PluginVersion }).version.channel, 'beta', 'served after the restart');
  },
);

changes(
  'publishes at once are bounded: one build worker, 10 unanswered per token (429 beyond) and 16 per origin (503 beyond), every 201 served',
  async () => {
    const added = await runDepot(['token', 'add', 'alice', '--name', 'ci-2'], ctx.workspace);
    assert.is(added.code, 0, added.stderr);
    const second = (JSON.parse(added.stdout) as { token: string }).token;
    // A new origin: no change of an earlier test is still being made and takes a place.
    ctx.origin.child.kill('SIGTERM');
    await ctx.origin.exited;
    await start();
    // Another build holds the lock, so that every publish below is waiting at once.
    const release = await acquireBuildLock(join(ctx.workspace.distDir, '.build.lock'));
    let first: Answer[];
    let then: Answer[];
    try {
      // Twenty at once: twelve from one token, of which it may have ten made or waiting; once its
      // two refusals are answered, all twelve have been counted, and the second token's eight find
      // six of the origin's sixteen places left.
      const sendAll = (token: string, from: number, count: number) => {
        let settled = 0;
        const sent = Array.from({ length: count }, (_, i) =>
          publish(form(`41.3.${from + i}`), token).finally(() => settled++),
        );
        // Each is awaited below; a failure meanwhile is not an unhandled rejection.
        for (const answer of sent) answer.catch(() => {});
        return { sent, settled: () => settled };
      };
      const one = sendAll(ctx.token, 0, 12);
      await until(
        () => one.settled() >= 2,
        () => `2 of the first token's 12 answered at once, not ${one.settled()}`,
        60_000,
      );
      const two = sendAll(second, 12, 8);
      await until(
        () => two.settled() >= 2,
        () => `2 of the second token's 8 answered at once, not ${two.settled()}`,
        60_000,
      );
      const children = await childrenOf(ctx.origin.child.pid!);
      assert.is(children.length, 1, 'one build worker for every publish');
      const memory = await rssMiB(children[0]!);
      assert.ok(memory < 400, `the worker holds ${memory.toFixed(0)} MiB`);
      await release();
      [first, then] = [await Promise.all(one.sent), await Promise.all(two.sent)];
    } catch (error) {
      await release().catch(() => {});
      throw error;
    }
    const statuses = (answers: Answer[]) => answers.map((answer) => answer.status).sort();
    const shown = JSON.stringify([...first, ...then].map((a) => a.body.error));
    assert.equal(statuses(first), [...Array(10).fill(201), ...Array(2).fill(429)], shown);
    assert.equal(statuses(then), [...Array(6).fill(201), ...Array(2).fill(503)], shown);
    for (const answer of [...first, ...then].filter((a) => a.status !== 201)) {
      assert.ok(Number(answer.headers.get('retry-after')) > 0);
      const why =
        answer.status === 429
          ? /^Token tok_[0-9a-f]{12} has 10 changes waiting for their answer on this origin, the most one token may; try again after Retry-After seconds$/
          : /^16 changes are being made or wait on this origin; try again after Retry-After seconds$/;
      assert.match(answer.body.error!, why);
    }
    for (const answer of [...first, ...then].filter((a) => a.status === 201)) {
      const served = await fetch(`${ctx.origin.url}/api/plugin-versions/${answer.body.version.id}`);
      assert.is(served.status, 200);
    }
  },
);

changes.run();

// Issue 41, item 3: the disk that fills after the commit. dist/ is on a real tmpfs, filled to the
// last page: the release's record is committed to data/ (another disk), then its tree cannot be written.
const fullDisk = suite('a disk that fills after the commit');
const ROOM_FOR_THE_LOCK = 16 * 1024;
const disk = {} as { small: SmallDisk; workspace: Workspace; origin: OriginProcess; token: string };
fullDisk.before(async () => {
  const built = await makeWorkspace();
  disk.small = await mountSmallDisk(64 * 1024);
  const distDir = join(disk.small.dir, 'dist');
  await run('cp', ['-a', built.distDir, distDir]);
  disk.workspace = { ...built, distDir };
  const added = await runDepot(['token', 'add', 'alice', '--name', 'ci', '--scopes', 'publish,edit'], disk.workspace);
  assert.is(added.code, 0, added.stderr);
  disk.token = (JSON.parse(added.stdout) as { token: string }).token;
  disk.origin = await spawnOrigin(disk.workspace);
});
fullDisk.after(async () => {
  disk.origin?.child.kill('SIGTERM');
  await disk.origin?.exited;
  await disk.small?.unmount();
  await disk.workspace?.remove();
});

fullDisk(
  'is 503 with Retry-After for every publish; once space is back, a retry is 409 naming the committed id, served',
  async () => {
    const asDisk = (body: FormData) =>
      fetch(`${disk.origin.url}/api/plugin-versions`, {
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${disk.token}` },
      }).then(async (response) => ({
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: (await response.json()) as Answer['body'] & { existingId?: string },
      }));
    await fillAfterTheCommit();
    const versions = join(disk.workspace.dataDir, 'versions');
    const before = new Set(await readdir(versions));
    const first = await asDisk(form('41.6.0'));
    assert.is(first.status, 503, first.body.error);
    assert.ok(Number(first.retryAfter) > 0);
    assert.is(
      first.body.error,
      "The depot's disk is full: the release was not finished; try again after Retry-After seconds",
    );
    const committed = (await readdir(versions)).filter((name) => !before.has(name) && name.endsWith('.json'));
    assert.is(committed.length, 1, disk.origin.stdout.join('\n') + disk.origin.stderr.join('\n'));
    const committedId = committed[0]!.slice(0, -'.json'.length);
    const second = await asDisk(form('41.6.1'));
    assert.is(second.status, 503, 'every later publish too, not 500');
    await rm(join(disk.small.dir, 'filler'));
    const retried = await asDisk(form('41.6.0'));
    assert.is(retried.status, 409, retried.body.error);
    assert.is(retried.body.existingId, committedId);
    // The retry's build served what was committed: the id it names answers, and the version is served once.
    const served = await fetch(`${disk.origin.url}/api/plugin-versions/${committedId}`);
    assert.is(served.status, 200);
    const list = await fetch(`${disk.origin.url}/api/plugin-versions`);
    const all = ((await list.json()) as { versions: PluginVersion[] }).versions;
    assert.equal(
      all.filter((version) => version.pluginVersion === '41.6.0').map((version) => version.id),
      [committedId],
    );
  },
);

fullDisk('an edit committed before the disk filled is kept by the next edit, as its audit record says', async () => {
  // The release the test before made (alice's: this token edits only hers).
  const listed = (await (await fetch(`${disk.origin.url}/api/plugin-versions`)).json()) as {
    versions: PluginVersion[];
  };
  const version = listed.versions.find((v) => v.pluginVersion === '41.6.0');
  assert.ok(version, 'the release of the test before');
  const editAs = (changes: unknown) =>
    fetch(`${disk.origin.url}/api/plugin-versions/${version.id}`, {
      method: 'PATCH',
      body: JSON.stringify(changes),
      headers: { authorization: `Bearer ${disk.token}`, 'content-type': 'application/json' },
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as Answer['body'] }));
  await fillAfterTheCommit();
  const refused = await editAs({ channel: 'beta' });
  assert.is(refused.status, 503, refused.body.error);
  await rm(join(disk.small.dir, 'filler'));
  const next = await editAs({ changelog: 'Kept the beta channel' });
  assert.is(next.status, 200, next.body.error);
  assert.is(next.body.version.channel, 'beta', 'the committed edit is served, not undone');
  const audit = await runDepot(['audit', '--target', version.id], disk.workspace);
  assert.is(audit.code, 0, audit.stderr);
  const edits = audit.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { action: string; changes: Record<string, unknown> })
    .filter((record) => record.action === 'edit');
  assert.equal(
    edits.map((record) => [record.changes.channel, typeof record.changes.changelog]),
    [
      ['beta', 'undefined'],
      [undefined, 'string'],
    ],
    'both edits audited, as served',
  );
});

fullDisk.run();

/** Full but for a few pages: the build lock's owner file fits, a change's tree does not. */
async function fillAfterTheCommit() {
  const filled = await fillDisk(disk.small.dir);
  await truncate(join(disk.small.dir, 'filler'), filled - ROOM_FOR_THE_LOCK);
}
