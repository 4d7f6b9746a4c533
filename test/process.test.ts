import { rm } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import {
  makeAccounts,
  makeWorkspace,
  spawnOrigin,
  until,
  type Accounts,
  type OriginProcess,
  type Workspace,
} from './helpers.ts';

// server/main.ts as operators run it: signals, logs on stdout and stderr, exit codes.

const ctx = {} as { workspace: Workspace; accounts: Accounts };

/** The origin's JSON lines on stdout (under `npm start`, npm's banner lines come first). */
const events = (origin: OriginProcess) =>
  origin.stdout.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An ingestion POST whose body arrives in two parts, the second when `finish` is called. */
function slowIngest(origin: OriginProcess, body: string) {
  const { id, ingestKey } = ctx.accounts.publicServer;
  const request = httpRequest(`${origin.url}/api/servers/${id}/stats`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${ingestKey}`,
      'content-type': 'application/json',
      'content-length': String(body.length),
    },
  });
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    request.on('response', (response) => response.resume().on('end', () => resolve(response)));
    request.on('error', reject);
  });
  request.write(body.slice(0, 5));
  return { answered, finish: () => request.end(body.slice(5)), abort: () => request.destroy() };
}

const shutdown = suite('graceful shutdown (SIGTERM)');
shutdown.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.accounts = await makeAccounts(ctx.workspace);
});
shutdown.after(() => ctx.workspace.remove());

shutdown(
  'a request in flight finishes, new connections are refused, the process exits 0 and the sample is kept',
  async () => {
    const origin = await spawnOrigin(ctx.workspace);
    const slow = slowIngest(origin, '{"players": 77}');
    await new Promise((r) => setTimeout(r, 300)); // the request line and half the body are in
    origin.child.kill('SIGTERM');
    await until(() => events(origin).some((e) => e.event === 'stopping'), 'the stop is logged');
    const refused = await fetch(`${origin.url}/healthz`).then(
      () => false,
      () => true,
    );
    assert.ok(refused, 'a new connection is refused while stopping');
    assert.is(origin.child.exitCode, null, 'still running for the request in flight');
    slow.finish();
    assert.is((await slow.answered).statusCode, 204);
    assert.is(await origin.exited, 0);
    const stopped = events(origin).find((e) => e.event === 'stopped')!;
    assert.ok((stopped.ms as number) < 10_000 && stopped.forced === undefined, JSON.stringify(stopped));
    assert.ok(
      events(origin).some((e) => e.method === 'POST' && e.status === 204),
      'the request was logged',
    );

    const again = await spawnOrigin(ctx.workspace);
    try {
      const svg = await (
        await fetch(`${again.url}/api/servers/${ctx.accounts.publicServer.id}/chart/players?days=1`)
      ).text();
      assert.match(svg, /peak 77 players/);
    } finally {
      again.child.kill('SIGTERM');
      assert.is(await again.exited, 0);
    }
  },
);

shutdown('idle keep-alive connections do not hold the stop up', async () => {
  const origin = await spawnOrigin(ctx.workspace);
  for (let i = 0; i < 3; i++) await (await fetch(`${origin.url}/api/plugin-versions`)).arrayBuffer(); // pooled, kept alive
  const started = Date.now();
  origin.child.kill('SIGTERM');
  assert.is(await origin.exited, 0);
  assert.ok(Date.now() - started < 3000, `${Date.now() - started} ms: waited for the keep-alive timeout`);
});

shutdown(
  'npm start in its own process group, SIGTERM sent to the group twice: the request in flight finishes, exit 0',
  async () => {
    // systemd (KillMode=control-group) or `kill -- -pgid` signals npm and node; npm forwards its copy.
    const origin = await spawnOrigin(ctx.workspace, {}, { npmStart: true });
    const group = origin.child.pid!;
    try {
      const slow = slowIngest(origin, '{"players": 78}');
      const status = slow.answered.then(
        (response) => response.statusCode,
        (error: Error) => error.message,
      );
      await pause(300);
      process.kill(-group, 'SIGTERM');
      process.kill(-group, 'SIGTERM');
      const stopping = () => events(origin).filter((e) => e.event === 'stopping').length;
      await until(() => stopping() >= 1, 'the stop is logged');
      // Signals sent within a few ms may reach a process as one (POSIX does not queue them): one more,
      // once the stop has begun, is surely a repeat.
      process.kill(-group, 'SIGTERM');
      await until(() => stopping() >= 2, 'a repeated signal is logged');
      await pause(500); // every copy of the signals has arrived
      assert.is(origin.child.exitCode, null, 'npm and the origin wait for the request in flight');
      slow.finish();
      assert.is(await status, 204);
      assert.is(await origin.exited, 0, origin.stderr.join('\n'));
      const stopped = events(origin).find((e) => e.event === 'stopped')!;
      assert.ok(stopped && stopped.forced === undefined, JSON.stringify(stopped));
      assert.ok(
        events(origin).some((e) => e.method === 'POST' && e.status === 204),
        'the request was logged',
      );
    } finally {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {} // the group is gone: it stopped by itself
    }
  },
);

shutdown(
  'Ctrl-C: the first stops gracefully, the second does not cut the stop short, the third forces it (exit 1)',
  async () => {
    const origin = await spawnOrigin(ctx.workspace);
    const slow = slowIngest(origin, '{"players": 6}');
    slow.answered.catch(() => {});
    await pause(300);
    // One keypress under npm start reaches node twice (the terminal's SIGINT and npm's copy).
    origin.child.kill('SIGINT');
    origin.child.kill('SIGINT');
    // Each keypress waits until the one before is handled, then a keypress's length more: under
    // load a fixed sleep ended before node handled the signals, which then arrived together and
    // counted as one keypress.
    await until(() => events(origin).some((e) => e.event === 'stopping'), 'the first keypress is logged');
    await pause(300);
    origin.child.kill('SIGTERM'); // a SIGTERM meanwhile does not count as a keypress
    origin.child.kill('SIGINT');
    await until(
      () =>
        events(origin).some((e) => e.event === 'stopping' && e.repeated === true && /1 more time/.test(String(e.msg))),
      () => `the second keypress is logged: ${origin.stdout.join('\n')}`,
    );
    assert.is(origin.child.exitCode, null, 'two keypresses: still waiting for the request in flight');
    await pause(300);
    const third = Date.now();
    origin.child.kill('SIGINT');
    assert.is(await origin.exited, 1);
    assert.ok(Date.now() - third < 5_000, `${Date.now() - third} ms: the third Ctrl-C did not stop it at once`);
    const stopped = events(origin).find((e) => e.event === 'stopped')!;
    assert.is(stopped.forced, true);
    assert.is(stopped.signal, 'SIGINT');
    slow.abort();
  },
);

shutdown('a request still running after 10 s is cut off and the process exits 1', async () => {
  const origin = await spawnOrigin(ctx.workspace);
  const slow = slowIngest(origin, '{"players": 5}');
  slow.answered.catch(() => {});
  await new Promise((r) => setTimeout(r, 300));
  const started = Date.now();
  origin.child.kill('SIGTERM');
  assert.is(await origin.exited, 1);
  const waited = Date.now() - started;
  assert.ok(waited >= 9_500 && waited < 13_000, `${waited} ms`);
  assert.ok(events(origin).some((e) => e.event === 'stopped' && e.forced === true));
  slow.abort();
});
shutdown.run();

const failures = suite('internal errors');
failures.before(async () => {
  ctx.workspace = await makeWorkspace();
});
failures.after(() => ctx.workspace.remove());

failures('a 500 answers {"error":"Internal server error"} with no detail; the cause goes to stderr', async () => {
  const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const entry = tree.routes.get('/api/plugin-versions')!;
  for (const file of [entry.file, `${entry.file}.br`, `${entry.file}.gz`]) await rm(join(tree.dir, file));
  const origin = await spawnOrigin(ctx.workspace);
  try {
    const response = await fetch(`${origin.url}/api/plugin-versions`);
    assert.is(response.status, 500);
    assert.is(await response.text(), '{"error":"Internal server error"}');
    await until(
      () => origin.stderr.some((line) => line.includes('[error] GET /api/plugin-versions')),
      'the cause is logged',
    );
    assert.ok(
      origin.stderr.some((line) => line.includes('ENOENT')),
      origin.stderr.join('\n'),
    );
    await until(
      () => events(origin).some((e) => e.path === '/api/plugin-versions' && e.status === 500),
      'the request is logged',
    );
  } finally {
    origin.child.kill('SIGTERM');
    await origin.exited;
  }
});
failures.run();
