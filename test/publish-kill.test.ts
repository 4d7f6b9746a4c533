import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readFileSync, readdirSync, watch } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makePluginJar } from '../build/plugin-jar.ts';
import {
  ROOT,
  SHARED_BUILD_CACHE,
  makeWorkspace,
  runBuildCommand,
  runDepot,
  snapshotFiles,
  until,
  type Workspace,
} from './helpers.ts';

// Issue 30 item 5: a kill -9 during an upload or a build leaves data/ as it was or with the version
// complete, never half. The origin is server/main.ts in a process group of its own, as systemd runs
// it; its build worker (server/publish/build-worker.ts, forked, not detached) is in that group, so
// killing the group kills both, as a machine's crash or `systemctl kill -s KILL` would.

const MiB = 1024 * 1024;
const BOUNDARY = '----depot-kill-test';

type Origin = { pid: number; url: string; stdout: string[]; exited: Promise<unknown> };

/** server/main.ts in its own process group (its pid is the group's id), ready once it has swept leftovers. */
async function startOrigin(workspace: Workspace): Promise<Origin> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...{ PORT: '0', HOST: '127.0.0.1', SITE: 'off', BUILD_CACHE_DIR: SHARED_BUILD_CACHE },
      ...{ DIST_DIR: workspace.distDir, DATA_DIR: workspace.dataDir, STORAGE_DIR: workspace.storageDir },
    },
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
  });
  const stdout: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdout.push(...chunk.toString().split('\n').filter(Boolean)));
  const exited = once(child, 'exit');
  const origin = { pid: child.pid!, url: '', stdout, exited };
  // The sweep runs beside serving: wait for it, so what it leaves is what the test sees.
  await until(() => stdout.some((line) => line.includes('"event":"swept"')), 'the origin started and swept', 30_000);
  origin.url = (JSON.parse(stdout.find((line) => line.includes('"event":"listening"'))!) as { url: string }).url;
  return origin;
}

/**
 * A restart as `npm start` makes it: `build --if-changed` (which, under the build lock, finishes or
 * undoes what a killed release left in data/), then the origin.
 */
async function restartOrigin(workspace: Workspace): Promise<Origin> {
  const built = await runBuildCommand(workspace, {}, ['--if-changed']);
  assert.is(built.code, 0, built.stderr);
  return startOrigin(workspace);
}

/** SIGKILL to the origin's whole group (the origin and a running `depot release`), then waits for the origin. */
async function killGroup(origin: Origin) {
  try {
    process.kill(-origin.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
  await origin.exited;
}

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const jarOf = (version: string, filler = 0) =>
  makePluginJar({
    files: { 'plugin.yml': `name: Kill\nversion: ${version}\nmain: org.example.Kill\n` },
    ...(filler ? { filler } : {}),
  });

const metadataOf = (version: string) => ({
  pluginVersion: version,
  javaVersion: '21',
  serverSoftware: ['PaperMC'],
  changelog: `Fixes for ${version}.`,
});

/** A publish over node:http whose body is written in chunks; the answer or the failure is ignored (the origin dies). */
function startPublish(origin: Origin, token: string, metadata: unknown, jar: Uint8Array, fileBytes?: number) {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${JSON.stringify(metadata)}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="Kill.jar"\r\n` +
      'Content-Type: application/java-archive\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const request = httpRequest(`${origin.url}/api/plugin-versions`, {
    method: 'POST',
    agent: false,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      'content-length': head.length + (fileBytes ?? jar.length) + tail.length,
    },
  });
  request.on('error', () => {});
  request.on('response', (response) => response.resume());
  request.write(head);
  if (fileBytes === undefined) request.end(Buffer.concat([jar, tail]));
  return request;
}

const uploadsLeft = (workspace: Workspace) =>
  readdir(join(workspace.storageDir, 'uploads')).catch((error: NodeJS.ErrnoException) =>
    error.code === 'ENOENT' ? [] : Promise.reject(error),
  );

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * data/ after a kill and a restart: as it was (`before`), or with exactly one version more, whole:
 * its record, its JAR (the sha256 the record names) and its changelog. Returns that version's id, or null.
 */
function assertWholeOrNothing(workspace: Workspace, before: Record<string, string>, now: Record<string, string>) {
  for (const [path, digest] of Object.entries(before)) assert.is(now[path], digest, `${path} changed`);
  const added = Object.keys(now).filter((path) => !(path in before));
  if (added.length === 0) return null;
  const records = added.filter((path) => /^versions\/plugin-[^/]+\.json$/.test(path));
  assert.is(records.length, 1, `data/ gained files without a record naming them: ${added.join(', ')}`);
  const id = records[0]!.slice('versions/'.length, -'.json'.length);
  assert.equal(added.sort(), [`jars/${id}.jar`, `versions/${id}.json`, `versions/${id}.md`].sort());
  const record = JSON.parse(readFileSync(join(workspace.dataDir, records[0]!), 'utf8')) as { sha256: string };
  assert.is(sha256(readFileSync(join(workspace.dataDir, 'jars', `${id}.jar`))), record.sha256);
  return id;
}

/**
 * After a restart: data/ whole or as it was, no upload left, then `depot release` of the same JAR
 * either releases it or refuses it as the duplicate of the version already there, and the origin
 * lists it once.
 */
async function assertRecovered(workspace: Workspace, before: Record<string, string>, version: string, jar: Uint8Array) {
  const origin = await restartOrigin(workspace);
  try {
    assert.equal(await uploadsLeft(workspace), [], 'uploads left after the sweep');
    const kept = assertWholeOrNothing(workspace, before, await snapshotFiles(workspace.dataDir));
    const file = join(workspace.dir, `Kill-${version}.jar`);
    await import('node:fs/promises').then((fs) => fs.writeFile(file, jar));
    const released = await runDepot(
      ['release', file, '--version', version, '--java', '21', '--software', 'PaperMC', '--by', 'alice'],
      workspace,
    );
    if (kept) {
      assert.is(released.code, 1, released.stdout);
      assert.match(released.stderr, /duplicate|already/i);
      assert.ok(released.stderr.includes(kept), released.stderr);
    } else assert.is(released.code, 0, released.stderr);
    await until(async () => {
      const list = (await (await fetch(`${origin.url}/api/plugin-versions`)).json()) as {
        versions: { pluginVersion: string; sha256: string }[];
      };
      return list.versions.filter((v) => v.pluginVersion === version && v.sha256 === sha256(jar)).length === 1;
    }, `${version} listed once by the restarted origin`);
    return { kept };
  } finally {
    await killGroup(origin);
  }
}

const ctx = {} as { workspace: Workspace; token: string };
const kill = suite('kill -9 of the publishing origin');
kill.before(async () => {
  ctx.workspace = await makeWorkspace();
  const added = await runDepot(['token', 'add', 'alice', '--name', 'kill'], ctx.workspace);
  assert.is(added.code, 0, added.stderr);
  ctx.token = (JSON.parse(added.stdout) as { token: string }).token;
});
kill.after(() => ctx.workspace.remove());

kill(
  'an upload cut by SIGKILL midway: after the restart data/ is byte-identical, no upload left, nothing listed',
  async () => {
    const { workspace } = ctx;
    const before = await snapshotFiles(workspace.dataDir);
    const origin = await startOrigin(workspace);
    const request = startPublish(origin, ctx.token, metadataOf('20.0.0'), new Uint8Array(), 32 * MiB);
    const chunk = Buffer.alloc(MiB, 9);
    for (let i = 0; i < 12; i++) if (!request.write(chunk)) await once(request, 'drain');
    await until(async () => (await uploadsLeft(workspace)).length > 0, 'the upload being written');
    await killGroup(origin);
    request.destroy();
    assert.ok((await uploadsLeft(workspace)).length > 0, 'the killed upload left its file for the sweep');
    const restarted = await restartOrigin(workspace);
    try {
      assert.equal(await uploadsLeft(workspace), []);
      assert.equal(await snapshotFiles(workspace.dataDir), before);
      const list = (await (await fetch(`${restarted.url}/api/plugin-versions`)).json()) as {
        versions: { pluginVersion: string }[];
      };
      assert.not.ok(list.versions.some((v) => v.pluginVersion === '20.0.0'));
    } finally {
      await killGroup(restarted);
    }
  },
);

/** Publishes `version` and SIGKILLs the origin's group once `when` resolves; then checks the recovery. */
async function killDuringBuild(version: string, when: (origin: Origin) => Promise<void>) {
  const { workspace } = ctx;
  const jar = jarOf(version, 256 * 1024);
  const before = await snapshotFiles(workspace.dataDir);
  const origin = await startOrigin(workspace);
  const request = startPublish(origin, ctx.token, metadataOf(version), jar);
  try {
    await when(origin);
  } finally {
    await killGroup(origin);
    request.destroy();
  }
  return assertRecovered(workspace, before, version, jar);
}

/** Resolves as soon as a new file (not a temporary one) appears in `dir` (inotify), bounded. */
function appears(dir: string, pattern: RegExp, ms = 60_000): Promise<void> {
  const known = new Set(readdirSync(dir));
  return new Promise((resolve, reject) => {
    const stop = (error?: Error) => {
      watcher.close();
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
    const watcher = watch(dir, (_type, name) => {
      if (name && pattern.test(name) && !known.has(name) && existsSync(join(dir, name))) stop();
    });
    const timer = setTimeout(() => stop(new Error(`nothing matching ${pattern} appeared in ${dir} in ${ms} ms`)), ms);
  });
}

kill('SIGKILL of the group the moment the JAR lands in data/jars: whole or nothing', async () => {
  await killDuringBuild('21.0.0', () => appears(join(ctx.workspace.dataDir, 'jars'), /^plugin-.*\.jar$/));
});

kill('SIGKILL of the group the moment the record lands in data/versions: whole or nothing', async () => {
  await killDuringBuild('21.1.0', () => appears(join(ctx.workspace.dataDir, 'versions'), /^plugin-.*\.json$/));
});

// A few points spread over the upload, the release and its build: fixed, so a failure replays.
for (const [i, ms] of [150, 700, 1600, 3200].entries())
  kill(`SIGKILL of the group ${ms} ms into a publish: whole or nothing`, async () => {
    await killDuringBuild(`22.${i}.0`, () => new Promise((resolve) => setTimeout(resolve, ms)));
  });

kill(
  'SIGKILL of the origin alone once its depot release has started: the child finishes or leaves nothing half',
  async () => {
    const { workspace } = ctx;
    const version = '23.0.0';
    const jar = jarOf(version, 256 * 1024);
    const before = await snapshotFiles(workspace.dataDir);
    const origin = await startOrigin(workspace);
    const request = startPublish(origin, ctx.token, metadataOf(version), jar);
    let children: number[] = [];
    await until(() => {
      const file = `/proc/${origin.pid}/task/${origin.pid}/children`;
      children = existsSync(file) ? readFileSync(file, 'utf8').split(' ').filter(Boolean).map(Number) : [];
      return children.length > 0;
    }, 'the origin’s depot release child');
    process.kill(origin.pid, 'SIGKILL');
    await origin.exited;
    request.destroy();
    // The child, its pipes to the origin closed, goes on or stops; bounded either way.
    await until(() => children.every((pid) => !isRunning(pid)), 'the orphaned depot release ended', 120_000);
    const { kept } = await assertRecovered(workspace, before, version, jar);
    // Killed or not, `kept` says which: either is whole (assertRecovered checked it).
    console.log(`  origin alone killed: the orphaned release ${kept ? `finished (${kept})` : 'left nothing'}`);
  },
);

kill.run();
