import { connect, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readConfig } from '../server/config.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { createFileStorage } from '../server/storage.ts';
import { makeAccounts, makeWorkspace, startTestOrigin, until, type Accounts, type Workspace } from './helpers.ts';

// Issue 27, item 7: slow clients and many connections must not hold the origin's sockets.

const settings = suite('HEADERS_TIMEOUT, REQUEST_TIMEOUT, MAX_CONNECTIONS');

settings('defaults of 10 s, 60 s and 768 connections; durations and counts are checked', () => {
  const defaults = readConfig({});
  assert.equal([defaults.headersTimeoutMs, defaults.requestTimeoutMs, defaults.maxConnections], [10_000, 60_000, 768]);
  const set = readConfig({ HEADERS_TIMEOUT: '1500ms', REQUEST_TIMEOUT: '2m', MAX_CONNECTIONS: '50' });
  assert.equal([set.headersTimeoutMs, set.requestTimeoutMs, set.maxConnections], [1500, 120_000, 50]);
  for (const [env, message] of [
    [{ HEADERS_TIMEOUT: 'soon' }, /HEADERS_TIMEOUT: must be a duration such as 10s/],
    [{ REQUEST_TIMEOUT: '2h' }, /REQUEST_TIMEOUT: must be a duration .* to 1h/],
    [{ HEADERS_TIMEOUT: '30s', REQUEST_TIMEOUT: '20s' }, /HEADERS_TIMEOUT: must not be longer than REQUEST_TIMEOUT/],
    [{ MAX_CONNECTIONS: '0' }, /MAX_CONNECTIONS: must be an integer from 1/],
  ] as const)
    assert.throws(() => readConfig(env), message);
});

settings.run();

const ctx = {} as { workspace: Workspace; accounts: Accounts; origins: RunningOrigin[]; sockets: Socket[] };
const slow = suite('slow and many clients over raw sockets');
slow.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.accounts = await makeAccounts(ctx.workspace);
  ctx.origins = [];
  ctx.sockets = [];
});
slow.after.each(async () => {
  for (const socket of ctx.sockets.splice(0)) socket.destroy();
  for (const origin of ctx.origins.splice(0)) await origin.close();
});
slow.after(async () => {
  await ctx.workspace?.remove();
});

async function startOrigin(limits: { headersTimeoutMs?: number; requestTimeoutMs?: number; maxConnections?: number }) {
  const origin = await startTestOrigin(ctx.workspace, {
    storage: createFileStorage(ctx.workspace.storageDir),
    ...limits,
  });
  ctx.origins.push(origin);
  return origin;
}

type RawConnection = { socket: Socket; received: () => string; closed: () => boolean; closedAt: () => number };

/** A raw TCP connection to the origin, recording what comes back and when it is closed. */
async function open(origin: RunningOrigin): Promise<RawConnection> {
  const { hostname, port } = new URL(origin.url);
  const socket = connect(Number(port), hostname);
  ctx.sockets.push(socket);
  let received = '';
  let closedAt = 0;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => {}); // a reset is one way of being closed
  socket.on('close', () => (closedAt = Date.now()));
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return { socket, received: () => received, closed: () => closedAt > 0, closedAt: () => closedAt };
}

/** Writes `text` one byte every `intervalMs` until it is all sent or the connection is closed; bounded by text's length. */
async function trickle(connection: RawConnection, text: string, intervalMs: number): Promise<number> {
  let sent = 0;
  for (const byte of text) {
    if (connection.closed() || connection.socket.destroyed) break;
    connection.socket.write(byte);
    sent++;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return sent;
}

slow('headers trickled one byte a second are cut off at HEADERS_TIMEOUT', async () => {
  const origin = await startOrigin({ headersTimeoutMs: 1000, requestTimeoutMs: 5000 });
  const connection = await open(origin);
  const started = Date.now();
  // 32 bytes at most, one a second: Node's defaults would keep listening for a minute.
  const sent = await trickle(connection, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', 1000);
  assert.ok(connection.closed(), `still open after ${sent} bytes in ${Date.now() - started} ms`);
  const after = connection.closedAt() - started;
  assert.ok(after >= 900 && after < 3000, `closed after ${after} ms`);
  assert.match(connection.received(), /^(HTTP\/1\.1 408 |$)/, 'a 408, or nothing');
});

slow('a connection that sends nothing is closed at HEADERS_TIMEOUT too', async () => {
  const origin = await startOrigin({ headersTimeoutMs: 1000, requestTimeoutMs: 5000 });
  const connection = await open(origin);
  const started = Date.now();
  await until(() => connection.closed(), 'the silent connection closed', 4000);
  assert.ok(Date.now() - started < 3000);
});

slow('a body trickled to a route that reads it is cut off at REQUEST_TIMEOUT', async () => {
  const origin = await startOrigin({ headersTimeoutMs: 1000, requestTimeoutMs: 2000 });
  const connection = await open(origin);
  const { id, ingestKey } = ctx.accounts.publicServer;
  const body = JSON.stringify({ players: 7 }).padEnd(40, ' ');
  const started = Date.now();
  connection.socket.write(
    `POST /api/servers/${id}/stats HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ingestKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  // 40 bytes at 4 a second would take 10 s.
  await trickle(connection, body, 250);
  assert.ok(connection.closed(), 'closed before the body was all sent');
  const after = connection.closedAt() - started;
  assert.ok(after >= 1900 && after < 4000, `closed after ${after} ms`);
});

slow('a 401 answered before the body arrived closes the connection', async () => {
  const origin = await startOrigin({ headersTimeoutMs: 10_000, requestTimeoutMs: 60_000 });
  const connection = await open(origin);
  const { id } = ctx.accounts.publicServer;
  connection.socket.write(
    `POST /api/servers/${id}/stats HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
  );
  await until(() => connection.received().includes('\r\n\r\n'), 'the answer', 5000);
  assert.match(connection.received(), /^HTTP\/1\.1 401 /);
  assert.match(connection.received(), /\r\nconnection: close\r\n/i);
  const answeredAt = Date.now();
  // The client goes on trickling its body; the origin is done with it.
  await trickle(connection, '"players": 1'.repeat(2), 200);
  assert.ok(connection.closed(), 'the connection was kept while the body trickled in');
  assert.ok(
    connection.closedAt() - answeredAt < 2000,
    `closed ${connection.closedAt() - answeredAt} ms after the answer`,
  );
});

slow('an answer after the whole request keeps the connection alive', async () => {
  const origin = await startOrigin({});
  const connection = await open(origin);
  const { id } = ctx.accounts.publicServer;
  const body = '{"players": 1}';
  connection.socket.write(
    `POST /api/servers/${id}/stats HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  await until(() => connection.received().includes('\r\n\r\n'), 'the first answer', 5000);
  assert.match(connection.received(), /^HTTP\/1\.1 401 /);
  assert.match(connection.received(), /\r\nconnection: keep-alive\r\n/i);
  connection.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(() => /HTTP\/1\.1 200 /.test(connection.received()), 'the second answer on the same connection', 5000);
  assert.not.ok(connection.closed());
});

slow('connections beyond MAX_CONNECTIONS are closed unanswered; a freed slot serves again', async () => {
  const origin = await startOrigin({ maxConnections: 4 });
  const held: RawConnection[] = [];
  for (let i = 0; i < 4; i++) {
    const connection = await open(origin);
    connection.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => /HTTP\/1\.1 200 /.test(connection.received()), `answer ${i + 1}`, 5000);
    held.push(connection);
  }
  const refused = await open(origin);
  refused.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(() => refused.closed(), 'the fifth connection closed', 5000);
  assert.is(refused.received(), '', 'no answer beyond the cap');
  assert.ok(
    held.every((connection) => !connection.closed()),
    'the four kept',
  );
  held[0]!.socket.destroy();
  await until(() => held[0]!.closed(), 'one of the four closed', 2000);
  // The origin learns of the close a moment later.
  await until(
    async () => {
      const again = await open(origin);
      again.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => again.closed() || /HTTP\/1\.1 200 /.test(again.received()), 'an answer or a close', 5000);
      return /HTTP\/1\.1 200 /.test(again.received());
    },
    'a new connection answered',
    5000,
  );
});

slow.run();
