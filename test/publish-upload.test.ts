import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, openAsBlob, watch } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type RequestListener, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { H3 } from 'h3';
import { toNodeHandler } from 'srvx/node';
// undici's own fetch, not the global one: the suite wraps that to check answers against the API's
// document, and this route is the test's own.
import { fetch, FormData, type RequestInit, Response } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ENDPOINTS } from '../server/endpoints.ts';
import { createErrorAnswer } from '../server/http/errors.ts';
import { receiveUpload } from '../server/publish/upload.ts';

const MiB = 1024 * 1024;
const MAX_BYTES = 64 * MiB;
const METADATA = { pluginVersion: '1.0.0', javaVersion: '21', serverSoftware: ['PaperMC'] };

type Received = { fileName: string; size: number; sha256: string; metadata: unknown; stored: string };

/** An h3 app on loopback with one route that receives an upload, hashes what landed on disk, and removes it. */
async function startUploadServer(dir: string) {
  const app = new H3({ onError: createErrorAnswer(ENDPOINTS), silent: true });
  app.post('/upload', async (event) => {
    const upload = await receiveUpload(event, { maxBytes: MAX_BYTES, dir });
    const stored = createHash('sha256');
    for await (const chunk of createReadStream(upload.path)) stored.update(chunk as Buffer);
    await upload.remove();
    const { fileName, size, sha256, metadata } = upload;
    return { fileName, size, sha256, metadata, stored: stored.digest('hex') } satisfies Received;
  });
  const server: Server = createServer(toNodeHandler((request) => app.fetch(request)) as RequestListener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/upload`,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections()),
  };
}

const ctx = {} as { dir: string; clientDir: string; server: Awaited<ReturnType<typeof startUploadServer>> };

const receive = suite('receiveUpload');
receive.before(async () => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'depot-upload-'));
  ctx.clientDir = await mkdtemp(join(tmpdir(), 'depot-upload-client-'));
  ctx.server = await startUploadServer(ctx.dir);
});
receive.after(async () => {
  await ctx.server.close();
  await rm(ctx.dir, { recursive: true, force: true });
  await rm(ctx.clientDir, { recursive: true, force: true });
});

/** Writes `size` random bytes to a file in 1 MiB chunks: the file and its digests. */
async function randomFile(name: string, size: number) {
  const path = join(ctx.clientDir, name);
  const sha256 = createHash('sha256');
  const chunks: Buffer[] = [];
  for (let left = size; left > 0; left -= MiB) {
    const chunk = randomBytes(Math.min(MiB, left));
    sha256.update(chunk);
    chunks.push(chunk);
  }
  await writeFile(path, chunks);
  return { path, sha256: sha256.digest('hex') };
}

/** A SPEC 2.9 error: JSON `{error}` with the status asked. */
async function assertError(response: Response, status: number, message: RegExp) {
  assert.is(response.status, status);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const body = (await response.json()) as { error: string };
  assert.type(body.error, 'string');
  assert.match(body.error, message);
  return body;
}

for (const [label, size] of [
  ['1 MB', 1_000_000],
  ['50 MB', 50 * MiB],
] as const) {
  receive(`a ${label} file arrives whole with its sha256, then its temporary file is gone`, async () => {
    const file = await randomFile(`Plugin-${size}.jar`, size);
    const form = new FormData();
    form.append('metadata', JSON.stringify(METADATA));
    // openAsBlob reads the file as undici sends it: the client does not hold it either.
    form.append('file', await openAsBlob(file.path), 'Plügin Ünïcode-1.0.0.jar');
    const response = await fetch(ctx.server.url, { method: 'POST', body: form });
    assert.is(response.status, 200, await response.clone().text());
    const received = (await response.json()) as Received;
    assert.equal(received, {
      fileName: 'Plügin Ünïcode-1.0.0.jar',
      size,
      sha256: file.sha256,
      metadata: METADATA,
      stored: file.sha256,
    });
    assert.equal(await readdir(ctx.dir), []);
  });
}

receive('the metadata part may come as a file (curl -F metadata=@meta.json)', async () => {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array([1, 2, 3])]), 'a.jar');
  form.append('metadata', new Blob([JSON.stringify(METADATA)], { type: 'application/json' }), 'meta.json');
  const response = await fetch(ctx.server.url, { method: 'POST', body: form });
  assert.is(response.status, 200);
  assert.equal(((await response.json()) as Received).metadata, METADATA);
});

// A garbage collection on demand (no flag on the worker's command line): the memory an upload holds
// is measured live, without the socket chunks it already let go of and the collector has not yet
// taken, which on a loaded worker came to 86 MiB of garbage.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/**
 * A client in a child process: POSTs a multipart body of a metadata part and a file of `total`
 * bytes, made as it is sent (written only as the socket drains: neither side holds it), stops
 * sending once answered; resolves with the answer and the file bytes it had sent by then.
 */
function streamFromChild(url: string, boundary: string, total: number) {
  const script = `
    const http = require('node:http');
    const [url, boundary, total] = [process.argv[1], process.argv[2], Number(process.argv[3])];
    const chunk = Buffer.alloc(256 * 1024, 7);
    let sent = 0, answered = false;
    const request = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'multipart/form-data; boundary=' + boundary } });
    request.on('response', (response) => {
      answered = true;
      let body = '';
      response.setEncoding('utf8').on('data', (text) => (body += text)).on('end', () => {
        process.stdout.write(JSON.stringify({ status: response.statusCode, type: response.headers['content-type'], body, sent }));
        request.destroy();
      });
    });
    request.on('error', () => {});
    request.write('--' + boundary + '\\r\\ncontent-disposition: form-data; name="metadata"\\r\\n\\r\\n' + process.argv[4] + '\\r\\n--' + boundary +
      '\\r\\ncontent-disposition: form-data; name="file"; filename="Huge.jar"\\r\\ncontent-type: application/java-archive\\r\\n\\r\\n');
    const next = () => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', next);
      }
      if (!answered) request.end('\\r\\n--' + boundary + '--\\r\\n');
    };
    next();
  `;
  return new Promise<{ status: number; type: string; body: string; sent: number }>((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', script, url, boundary, String(total), JSON.stringify(METADATA)],
      { timeout: 60_000, maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}: ${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

const memory = () => {
  collectGarbage();
  const { rss, arrayBuffers } = process.memoryUsage();
  return { rss, arrayBuffers };
};

receive(
  'a file past maxBytes: 413 long before the body ends, memory not growing by its size, nothing kept',
  async () => {
    const total = 512 * MiB;
    const boundary = `----depot${randomBytes(8).toString('hex')}`;
    const before = memory();
    // The client in a process of its own, so that what is measured is the server's alone (a
    // client in this process buffered about 64 MiB of its own body, which read as the server's).
    const sentBy = await streamFromChild(ctx.server.url, boundary, total);
    const after = memory();
    const { sent } = sentBy;
    const response = new Response(sentBy.body, { status: sentBy.status, headers: { 'content-type': sentBy.type } });
    const answer = await assertError(response, 413, /the file is larger than 67108864 bytes \(PUBLISH_MAX_BYTES\)/);
    assert.equal(answer, { error: answer.error, maxBytes: MAX_BYTES });
    assert.ok(sent < MAX_BYTES + 64 * MiB, `answered after ${sent / MiB} MiB of ${total / MiB} MiB`);
    assert.ok(after.rss - before.rss < 64 * MiB, `rss grew by ${(after.rss - before.rss) / MiB} MiB`);
    assert.ok(
      after.arrayBuffers - before.arrayBuffers < 32 * MiB,
      `arrayBuffers grew by ${(after.arrayBuffers - before.arrayBuffers) / MiB} MiB`,
    );
    await until(async () => (await readdir(ctx.dir)).length === 0, 'the temporary file removed');
  },
);

receive('a Content-Length past maxBytes: 413 before a byte of the body is read', async () => {
  const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = httpRequest(ctx.server.url, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(MAX_BYTES + MiB) },
    });
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (text: string) => (body += text));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
    request.on('error', reject);
    request.setTimeout(5000, () => reject(new Error('no answer before the body was sent')));
    request.flushHeaders();
  });
  assert.is(answer.status, 413);
  assert.match(JSON.parse(answer.body).error, /larger than 67108864 bytes/);
  assert.equal(await readdir(ctx.dir), []);
});

const form = (parts: Record<string, string | [Blob, string]>) => {
  const data = new FormData();
  for (const [name, value] of Object.entries(parts))
    if (typeof value === 'string') data.append(name, value);
    else data.append(name, ...value);
  return data;
};
const jar = (): [Blob, string] => [new Blob([new Uint8Array(1000)]), 'Plugin.jar'];

const refusals: [string, () => RequestInit, number, RegExp][] = [
  [
    'a JSON body: 415',
    () => ({ body: JSON.stringify(METADATA), headers: { 'content-type': 'application/json' } }),
    415,
    /must be multipart\/form-data/,
  ],
  [
    'a url-encoded form: 415',
    () => ({ body: new URLSearchParams({ metadata: '{}' }) }),
    415,
    /must be multipart\/form-data/,
  ],
  ['no metadata part: 400 naming it', () => ({ body: form({ file: jar() }) }), 400, /missing the part "metadata"/],
  [
    'no file part: 400 naming it',
    () => ({ body: form({ metadata: JSON.stringify(METADATA) }) }),
    400,
    /missing the part "file";/,
  ],
  [
    'neither part: 400 naming both',
    () => ({ body: form({ other: 'x' }) }),
    400,
    /unexpected part "other"; send one part "file"/,
  ],
  [
    'a metadata part that is not JSON: 400',
    () => ({ body: form({ metadata: '{pluginVersion: 1', file: jar() }) }),
    400,
    /the part "metadata" is not JSON/,
  ],
  [
    'a file part without a filename: 400',
    () => ({ body: form({ metadata: '{}', file: 'just text' }) }),
    400,
    /the part "file" must be a file with a filename/,
  ],
  [
    'two file parts: 400',
    () => {
      const data = form({ metadata: '{}', file: jar() });
      data.append('file', ...jar());
      return { body: data };
    },
    400,
    /unexpected part "file"/,
  ],
  [
    'a metadata part over 256 KiB: 400',
    () => ({ body: form({ metadata: JSON.stringify({ changelog: 'x'.repeat(300_000) }), file: jar() }) }),
    400,
    /the part "metadata" is longer than 262144 bytes/,
  ],
];
for (const [name, init, status, message] of refusals) {
  receive(`refuses ${name}, leaving no file`, async () => {
    await assertError(await fetch(ctx.server.url, { method: 'POST', ...init() }), status, message);
    await until(async () => (await readdir(ctx.dir)).length === 0, 'no temporary file');
  });
}

receive('a part after the refused one, in the same chunk of the body, is never written', async () => {
  // busboy goes on parsing the chunk it holds after a refusal: a file part there was once written
  // after the refusal's cleanup, and left behind (Node 24, CI). Every name created in the folder is recorded.
  const created = new Set<string>();
  const watcher = watch(ctx.dir, (_event, name) => name && created.add(name));
  try {
    const boundary = 'one-chunk';
    const body =
      `--${boundary}\r\ncontent-disposition: form-data; name="metadata"\r\n\r\n${'x'.repeat(300_000)}\r\n` +
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="After.jar"\r\n\r\nPK\r\n--${boundary}--\r\n`;
    const answer = await rawRequest(ctx.server.port, boundary, body);
    assert.match(answer, /^HTTP\/1\.1 400 /);
    // An upload answered after it: its file operations were queued after any of the refused body's.
    const response = await fetch(ctx.server.url, { method: 'POST', body: form({ metadata: '{}', file: jar() }) });
    assert.is(response.status, 200);
    await until(async () => created.size > 0, 'the second upload written');
    assert.is(created.size, 1, `files created: ${[...created].join(', ')}`);
    assert.equal(await readdir(ctx.dir), []);
  } finally {
    watcher.close();
  }
});

/** Sends one multipart POST in a single write on a raw socket: its status line and headers, as text. */
async function rawRequest(port: number, boundary: string, body: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    `POST /upload HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n` +
      `content-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n` +
      body,
  );
  let answer = '';
  socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
  await new Promise((resolve) => socket.once('close', resolve));
  return answer;
}

receive('a client that disconnects midway leaves no temporary file', async () => {
  const boundary = 'cut';
  const socket = connect(ctx.server.port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    `POST /upload HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: multipart/form-data; boundary=${boundary}\r\n` +
      `content-length: ${8 * MiB}\r\n\r\n` +
      `--${boundary}\r\ncontent-disposition: form-data; name="metadata"\r\n\r\n{}\r\n` +
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="Cut.jar"\r\n\r\n`,
  );
  socket.write(Buffer.alloc(2 * MiB, 1));
  await until(async () => (await readdir(ctx.dir)).length === 1, 'the upload being written');
  socket.destroy();
  await until(async () => (await readdir(ctx.dir)).length === 0, 'the temporary file removed');
});

receive.run();

async function until(condition: () => Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
