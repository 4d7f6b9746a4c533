import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { lock } from 'proper-lockfile';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DayRecord } from '../server/charts/samples.ts';
import { DAY, HOUR } from '../server/helpers/duration.ts';
import { ServerRecord } from '../server/charts/servers.ts';
import { createFileStorage } from '../server/storage.ts';
import { TokenRecord } from '../server/users.ts';
import { TEMPORARY_FILE } from '../server/write-atomic.ts';
import {
  makeAccounts,
  makeWorkspace,
  runDepot,
  spawnOrigin,
  type Accounts,
  type OriginProcess,
  type Workspace,
} from './helpers.ts';

const ctx = {} as { workspace: Workspace; accounts: Accounts; servers: { id: string; ingestKey: string }[] };

async function setup() {
  ctx.workspace = await makeWorkspace();
  ctx.accounts = await makeAccounts(ctx.workspace);
  const third = await runDepot(['server', 'add', '--owner', 'olivia', '--name', 'Third'], ctx.workspace);
  ctx.servers = [ctx.accounts.publicServer, ctx.accounts.privateServer, JSON.parse(third.stdout)];
}

/** One sample POSTed as a server reports it. */
function postSample(
  origin: OriginProcess,
  server: { id: string; ingestKey: string },
  at: number | string,
  players: number,
): Promise<Response> {
  return fetch(`${origin.url}/api/servers/${server.id}/stats`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.ingestKey}` },
    body: JSON.stringify({ samples: [{ at: new Date(at).toISOString(), players }] }),
  });
}

/** Stops an origin started by a test, gracefully. */
async function stopOrigin(origin: OriginProcess): Promise<void> {
  origin.child.kill('SIGTERM');
  await origin.exited;
}

/** Every record in STORAGE_DIR, each parsed with the schema the origin reads it with. */
async function storedRecords(storageDir: string): Promise<Map<string, unknown>> {
  const storage = createFileStorage(storageDir);
  const records = new Map<string, unknown>();
  for (const key of await storage.getKeys()) {
    if (key.startsWith('cache:')) continue;
    const value = await storage.getItem(key);
    const schema = key.startsWith('samples:')
      ? DayRecord
      : key.startsWith('servers:')
        ? ServerRecord
        : key.startsWith('user-tokens:')
          ? TokenRecord
          : null;
    if (schema)
      assert.ok(schema.safeParse(value).success, `${key} is a readable record: ${JSON.stringify(value)?.slice(0, 80)}`);
    records.set(key, value);
  }
  return records;
}

/** Files of STORAGE_DIR that are empty (a torn write would leave one); a crash's leftover temporary files are no records. */
async function emptyFiles(dir: string): Promise<string[]> {
  const empty: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || TEMPORARY_FILE.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    if ((await stat(path)).size === 0) empty.push(path);
  }
  return empty;
}

const torture = suite('kill -9 during ingestion');
torture.before(setup);
torture.after(() => ctx.workspace.remove());

torture('every sample answered 204 is stored after repeated kill -9 of the origin, and no record is torn', async () => {
  // Each sample has an hour of its own (server, hour), so its bucket must read [players, players, 1].
  const base = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  const acknowledged: { server: string; at: number; players: number }[] = [];
  const next = ctx.servers.map(() => 0);
  const deadline = Date.now() + 60_000;
  for (let round = 0; round < 6 && Date.now() < deadline; round++) {
    const origin = await spawnOrigin(ctx.workspace, { LOG_REQUESTS: 'off', RATE_LIMIT: '0', INGEST_RATE_LIMIT: '0' });
    const answeredBefore = acknowledged.length;
    // Three clients per server post one sample each, back to back, until the kill.
    const clients = ctx.servers.flatMap((server, s) =>
      [0, 1, 2].map(async () => {
        for (;;) {
          const i = next[s]!++;
          if (i >= 24 * 360) return;
          const sample = { server: server.id, at: base - i * HOUR, players: (i * 7 + s) % 1000 };
          const answer = await postSample(origin, server, sample.at, sample.players).catch(() => null);
          if (!answer) return; // the origin is gone
          if (answer.status === 204) acknowledged.push(sample);
          else assert.unreachable(`ingestion answered ${answer.status}: ${await answer.text()}`);
        }
      }),
    );
    // The kill falls at a random moment once the round has had 25 answers (or 10 s went by): on a
    // busy machine a fixed time could pass before the origin answered much at all.
    const roundDeadline = Date.now() + 10_000;
    while (acknowledged.length - answeredBefore < 25 && Date.now() < roundDeadline)
      await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, Math.random() * 400));
    origin.child.kill('SIGKILL');
    await origin.exited;
    await Promise.all(clients);
  }
  assert.ok(acknowledged.length > 100, `enough samples were answered before the kills (${acknowledged.length})`);

  // Restarted as `npm start` does: what the last origin journaled and did not fold is folded before it listens.
  const origin = await spawnOrigin(ctx.workspace);
  const records = await storedRecords(ctx.workspace.storageDir);
  const missing = acknowledged.filter(({ server, at, players }) => {
    const day = records.get(`samples:${server}:${Math.floor(at / DAY)}`) as Record<string, number[]> | undefined;
    const bucket = day?.[String(Math.floor((at % DAY) / HOUR))];
    return !bucket || bucket[0] !== players || bucket[2] !== 1;
  });
  assert.equal(
    missing.slice(0, 5),
    [],
    `${missing.length} of ${acknowledged.length} answered samples were lost or changed`,
  );
  assert.equal(await emptyFiles(ctx.workspace.storageDir), []);

  // And the origin serves them after the last crash.
  try {
    const answer = await fetch(`${origin.url}/api/servers/${ctx.servers[0]!.id}/chart/players?days=365`);
    assert.is(answer.status, 200);
  } finally {
    await stopOrigin(origin);
  }
});
torture.run();

const writers = suite('the CLI and the origin writing one day');
writers.before(setup);
writers.after(() => ctx.workspace.remove());

writers('depot stats add during HTTP ingestion: every sample of both is counted', async () => {
  const server = ctx.servers[0]!;
  const origin: OriginProcess = await spawnOrigin(ctx.workspace, {
    LOG_REQUESTS: 'off',
    RATE_LIMIT: '0',
    INGEST_RATE_LIMIT: '0',
  });
  const at = new Date(Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR).toISOString();
  let posted = 0;
  try {
    const cli = Array.from({ length: 6 }, (_, i) =>
      runDepot(['stats', 'add', server.id, String(1000 + i), '--at', at], ctx.workspace),
    );
    const http = Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 100; i++) {
        const answer = await postSample(origin, server, at, 5);
        assert.is(answer.status, 204);
        posted++;
      }
    });
    const results = await Promise.all(cli);
    await Promise.all(http);
    for (const result of results) assert.is(result.code, 0, result.stderr);
  } finally {
    await stopOrigin(origin);
  }
  // A stop folds what the origin journaled into the day the CLI wrote too.
  const at_ = Date.parse(at);
  const day = JSON.parse(
    await readFile(join(ctx.workspace.storageDir, 'samples', server.id, String(Math.floor(at_ / DAY))), 'utf8'),
  );
  const [max, sum, count] = day[String(Math.floor((at_ % DAY) / HOUR))];
  assert.is(count, posted + 6);
  assert.is(sum, posted * 5 + 1000 + 1001 + 1002 + 1003 + 1004 + 1005);
  assert.is(max, 1005);
});
writers.run();

const held = suite('a day locked by another process');
held.before(setup);
held.after(() => ctx.workspace.remove());

held(
  'ingestion answers 204 at once while another process holds the day, and the day holds the sample once it is let go',
  async () => {
    const server = ctx.servers[0]!;
    const at = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
    const dayFile = join(ctx.workspace.storageDir, 'samples', server.id, String(Math.floor(at / DAY)));
    await mkdir(dirname(dayFile), { recursive: true });
    // A live holder: it keeps the lock fresh, until it lets go (also when an assertion fails, so that
    // no refresh of a removed lock throws later in this process).
    const release = await lock(dayFile, { realpath: false, stale: 2000, onCompromised: () => {} });
    let released = false;
    const origin = await spawnOrigin(ctx.workspace, { RATE_LIMIT: '0', INGEST_RATE_LIMIT: '0' });
    try {
      // The sample is durable in the origin's journal: the day is folded once its lock is free.
      const started = performance.now();
      assert.is((await postSample(origin, server, at, 77)).status, 204);
      assert.ok(performance.now() - started < 2000, 'it did not wait for the day');
      const chart = await fetch(`${origin.url}/api/servers/${server.id}/chart/players?days=2&format=json`);
      assert.match(await chart.text(), '77', 'the chart shows it before its day is written');
      await new Promise((r) => setTimeout(r, 500));
      await release();
      released = true;
    } finally {
      if (!released) await release();
      await stopOrigin(origin);
    }
    const day = JSON.parse(await readFile(dayFile, 'utf8')) as Record<string, number[]>;
    assert.equal(day[String(Math.floor((at % DAY) / HOUR))], [77, 77, 1]);
  },
);
held.run();
