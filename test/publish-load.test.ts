import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, openAsBlob } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FormData, fetch } from 'undici';
import { makePluginJar } from '../build/plugin-jar.ts';
import type { PluginVersion } from '../server/versions/schema.ts';
import {
  makeWorkspace,
  runDepot,
  snapshotFiles,
  spawnOrigin,
  until,
  type OriginProcess,
  type Workspace,
} from './helpers.ts';

// Issue 30 item 7: publishing under load over real HTTP against the origin as operators run it: a
// 50 MB JAR, an oversize upload refused without the origin holding it, an upload cut off midway,
// ten publishes at once, and an origin that does not publish.

const MiB = 1024 * 1024;

type Answer = { version: PluginVersion; error?: string };

const jar = (version: string, filler = 0) =>
  makePluginJar({
    files: { 'plugin.yml': `name: Load\nversion: ${version}\nmain: org.example.Load\n` },
    ...(filler ? { filler } : {}),
  });

const metadataOf = (version: string) => ({ pluginVersion: version, javaVersion: '21', serverSoftware: ['PaperMC'] });

/** A workspace with a publishing token for alice, and the origin(s) a suite spawns on it. */
type Setup = { workspace: Workspace; token: string; origin: OriginProcess };

async function setUp(env: Record<string, string> = {}): Promise<Setup> {
  const workspace = await makeWorkspace();
  const added = await runDepot(['token', 'add', 'alice', '--name', 'load'], workspace);
  assert.is(added.code, 0, added.stderr);
  const { token } = JSON.parse(added.stdout) as { token: string };
  return { workspace, token, origin: await spawnOrigin(workspace, env) };
}

async function tearDown({ workspace, origin }: Setup): Promise<void> {
  // A publish's full build goes on after its answer: its lock is gone once it is done.
  await until(() => !existsSync(join(workspace.distDir, '.build.lock')), 'the last build', 180_000);
  origin.child.kill('SIGTERM');
  await origin.exited;
  await workspace.remove();
}

/** undici's fetch with undici's FormData: the JAR part from a Blob (file-backed for big ones). */
async function publish(setup: Setup, file: Blob, fileName: string, metadata: unknown) {
  const body = new FormData();
  body.set('file', file, fileName);
  body.set('metadata', JSON.stringify(metadata));
  const response = await fetch(`${setup.origin.url}/api/plugin-versions`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${setup.token}` },
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Answer };
}

const uploads = async (setup: Setup) =>
  readdir(join(setup.workspace.storageDir, 'uploads')).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });

/** The origin's resident memory in bytes, as Linux counts it (VmRSS). */
async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) * 1024;
}

const BOUNDARY = '----depot-load-test';

/** A multipart body's parts up to the JAR's first byte: the metadata, then the file part's header. */
const multipartHead = (metadata: unknown) =>
  Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${JSON.stringify(metadata)}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="Load.jar"\r\n` +
      'Content-Type: application/java-archive\r\n\r\n',
  );

/** A raw POST over node:http, whose body the test writes chunk by chunk (and may abandon). */
function rawPost(setup: Setup, headers: Record<string, string | number> = {}) {
  const request = httpRequest(`${setup.origin.url}/api/plugin-versions`, {
    method: 'POST',
    agent: false,
    headers: {
      authorization: `Bearer ${setup.token}`,
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      ...headers,
    },
  });
  const failed: Error[] = [];
  request.on('error', (error) => failed.push(error));
  // null: the connection failed before an answer (once() rejects on the request's 'error').
  const answered = once(request, 'response').then(
    ([response]) => response as IncomingMessage,
    () => null,
  );
  return { request, answered, failed };
}

/** Writes `chunks` (a generator) until the origin answers or the connection fails; how many bytes went. */
async function writeUntilAnswered(request: ClientRequest, chunks: Iterable<Buffer>, answered: Promise<unknown>) {
  let settled = false;
  void answered.then(() => (settled = true));
  request.once('close', () => (settled = true));
  let sent = 0;
  for (const chunk of chunks) {
    if (settled || request.destroyed) break;
    sent += chunk.length;
    if (!request.write(chunk))
      await Promise.race([once(request, 'drain'), answered, once(request, 'close'), sleep(5_000)]);
  }
  return sent;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const bodyText = async (response: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
};

// ---------------------------------------------------------------------------------------------

const big = suite('publishing at the default limit (64 MiB)');
const main = {} as Setup;
big.before(async () => {
  Object.assign(main, await setUp());
});
big.after(() => tearDown(main));

big('a 50 MB JAR is published and served, its download the bytes sent', async () => {
  const bytes = jar('11.0.0', 50 * MiB);
  const path = join(main.workspace.dir, 'Load-11.0.0.jar');
  await writeFile(path, bytes);
  const digest = createHash('sha256').update(bytes).digest('hex');
  const answer = await publish(main, await openAsBlob(path), 'Load-11.0.0.jar', metadataOf('11.0.0'));
  assert.is(answer.status, 201, JSON.stringify(answer.body));
  assert.equal([answer.body.version.fileSize, answer.body.version.sha256], [bytes.length, digest]);
  const download = await fetch(`${main.origin.url}/api/plugin-versions/download/${answer.body.version.id}`);
  assert.is(download.status, 200);
  const served = createHash('sha256')
    .update(Buffer.from(await download.arrayBuffer()))
    .digest('hex');
  assert.is(served, digest);
  assert.equal(await uploads(main), []);
});

big('an upload cut off midway leaves nothing: no temporary file, data/ as it was', async () => {
  const data = await snapshotFiles(main.workspace.dataDir);
  const head = multipartHead(metadataOf('11.1.0'));
  const fileBytes = 8 * MiB;
  const { request, failed } = rawPost(main, { 'content-length': head.length + fileBytes + 64 });
  request.write(head);
  const half = Buffer.alloc(MiB, 7);
  for (let sent = 0; sent < fileBytes / 2; sent += half.length)
    if (!request.write(half)) await Promise.race([once(request, 'drain'), sleep(5_000)]);
  // The upload is being written: its temporary file is there.
  await until(async () => (await uploads(main)).length > 0, 'the temporary upload file');
  request.destroy();
  await until(async () => (await uploads(main)).length === 0, 'the temporary upload file removed');
  assert.equal(await snapshotFiles(main.workspace.dataDir), data);
  assert.ok(failed.length <= 1);
  // The origin goes on answering.
  assert.is((await fetch(`${main.origin.url}/api/plugin-versions`)).status, 200);
});

big('ten publishes at once queue on the build lock: each answered 201 and listed', async () => {
  const versions = Array.from({ length: 10 }, (_, i) => `12.${i}.0`);
  const answers = await Promise.all(
    versions.map((version) =>
      publish(main, new Blob([Buffer.from(jar(version))]), `Load-${version}.jar`, metadataOf(version)),
    ),
  );
  for (const [i, answer] of answers.entries()) {
    assert.is(answer.status, 201, `${versions[i]}: ${JSON.stringify(answer.body)}`);
    assert.is(answer.body.version.pluginVersion, versions[i]);
  }
  const ids = answers.map((answer) => answer.body.version.id);
  assert.is(new Set(ids).size, 10);
  const list = (await (await fetch(`${main.origin.url}/api/plugin-versions`)).json()) as { versions: PluginVersion[] };
  const listed = new Set(list.versions.map((version) => version.id));
  assert.equal(
    ids.filter((id) => !listed.has(id)),
    [],
  );
  assert.equal(await uploads(main), []);
});

big.run();

// ---------------------------------------------------------------------------------------------

const oversize = suite('an upload past PUBLISH_MAX_BYTES (2 MiB)');
const small = {} as Setup;
oversize.before(async () => {
  Object.assign(small, await setUp({ PUBLISH_MAX_BYTES: '2MiB' }));
});
oversize.after(() => tearDown(small));

/** The multipart body of a `size`-byte file, in 1 MiB chunks made as they are sent. */
function* streamedBody(metadata: unknown, size: number): Generator<Buffer> {
  yield multipartHead(metadata);
  const chunk = Buffer.alloc(MiB, 0x5a);
  for (let sent = 0; sent < size; sent += chunk.length) yield chunk;
  yield Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
}

/** Streams a `size`-byte upload without Content-Length (the origin cannot refuse it unread); the answer. */
async function streamOversize(size: number) {
  const { request, answered, failed } = rawPost(small);
  await writeUntilAnswered(request, streamedBody(metadataOf('13.0.0'), size), answered);
  const response = await Promise.race([answered, sleep(30_000).then(() => null)]);
  request.destroy();
  assert.ok(response, `no answer: ${failed.map((e) => e.message).join('; ')}`);
  return { status: response.statusCode, body: JSON.parse(await bodyText(response)) as { error: string } };
}

oversize('refused 413 at once, the origin not holding the upload; nothing kept', async () => {
  const data = await snapshotFiles(small.workspace.dataDir);
  // A first refusal loads what the route needs (busboy and the rest), which is not the upload's memory.
  assert.is((await streamOversize(4 * MiB)).status, 413);
  const upload = 64 * MiB;
  const before = await residentBytes(small.origin.child.pid!);
  const refused = await streamOversize(upload);
  const after = await residentBytes(small.origin.child.pid!);
  assert.is(refused.status, 413);
  assert.match(refused.body.error, /PUBLISH_MAX_BYTES/);
  assert.ok(
    after - before < upload / 4,
    `the origin grew by ${((after - before) / MiB).toFixed(1)} MiB for a ${upload / MiB} MiB upload`,
  );
  await until(async () => (await uploads(small)).length === 0, 'the temporary upload file removed');
  assert.equal(await snapshotFiles(small.workspace.dataDir), data);
});

oversize.run();

// ---------------------------------------------------------------------------------------------

const off = suite('PUBLISH=off');
const readOnly = {} as Setup;
off.before(async () => {
  Object.assign(readOnly, await setUp({ PUBLISH: 'off' }));
});
off.after(() => tearDown(readOnly));

off('POST and PATCH are 503 with Retry-After, naming PUBLISH; nothing released', async () => {
  const data = await snapshotFiles(readOnly.workspace.dataDir);
  const posted = await publish(readOnly, new Blob([Buffer.from(jar('14.0.0'))]), 'Off.jar', metadataOf('14.0.0'));
  assert.is(posted.status, 503);
  assert.ok(Number(posted.headers.get('retry-after')) > 0, `Retry-After: ${posted.headers.get('retry-after')}`);
  assert.match(String(posted.body.error), /PUBLISH=off/);
  const patched = await fetch(`${readOnly.origin.url}/api/plugin-versions/plugin-1-abc`, {
    method: 'PATCH',
    body: JSON.stringify({ channel: 'beta' }),
    headers: { authorization: `Bearer ${readOnly.token}`, 'content-type': 'application/json' },
  });
  assert.is(patched.status, 503);
  assert.ok(patched.headers.get('retry-after'));
  assert.match(((await patched.json()) as { error: string }).error, /PUBLISH=off/);
  assert.equal(await snapshotFiles(readOnly.workspace.dataDir), data);
  assert.equal(await uploads(readOnly), []);
});

off.run();
