import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sampleStore } from '../server/charts/samples.ts';
import { HOUR } from '../server/helpers/duration.ts';
import { createFileStorage } from '../server/storage.ts';
import { makeAccounts, makeWorkspace, runDepot, spawnOrigin, type OriginProcess, type Workspace } from './helpers.ts';

// Issue 32 item 4: the origin is killed (SIGKILL) during a burst of POSTs from many servers, while
// samples wait in its journal; restarted as `npm start` does, it counts every sample answered 204
// exactly once. Each sample of a (server, hour) is a distinct power of two, so an hour's sum says
// which samples it holds: a sum with fewer one bits than its count holds one twice.

const SERVERS = 10;
const CLIENTS_PER_SERVER = 5;
/** Samples per (server, hour): 2^0 .. 2^19 players, all within the 1,000,000 allowed. */
const PER_HOUR = 20;

type Sent = { server: number; hour: number; bit: number };
const ctx = {} as { workspace: Workspace; servers: { id: string; ingestKey: string }[] };

const kill = suite('kill -9 during a burst of samples from many servers');
kill.before(async () => {
  ctx.workspace = await makeWorkspace();
  const accounts = await makeAccounts(ctx.workspace);
  const more = await Promise.all(
    Array.from({ length: SERVERS - 2 }, (_, i) =>
      runDepot(['server', 'add', '--owner', 'olivia', '--name', `Server ${i}`], ctx.workspace),
    ),
  );
  ctx.servers = [accounts.publicServer, accounts.privateServer, ...more.map((r) => JSON.parse(r.stdout))];
});
kill.after(() => ctx.workspace.remove());

/** Posts samples for one server until the origin is gone; records what was answered 204 and what was sent. */
async function postUntilKilled(
  origin: OriginProcess,
  s: number,
  next: number[],
  base: number,
  log: {
    answered: Sent[];
    sent: Sent[];
  },
) {
  const server = ctx.servers[s]!;
  for (let n = 0; n < 5000; n++) {
    const i = next[s]!++;
    const sample = { server: s, hour: base - Math.floor(i / PER_HOUR) * HOUR, bit: i % PER_HOUR };
    log.sent.push(sample);
    const answer = await fetch(`${origin.url}/api/servers/${server.id}/stats`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.ingestKey}` },
      body: JSON.stringify({
        samples: [{ at: new Date(sample.hour + 60_000).toISOString(), players: 2 ** sample.bit }],
      }),
    }).catch(() => null);
    if (!answer) return;
    if (answer.status === 204) log.answered.push(sample);
    else assert.unreachable(`ingestion answered ${answer.status}: ${await answer.text()}`);
  }
}

kill('every sample answered 204 is counted exactly once after repeated kills and a restart', async () => {
  const base = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  const log = { answered: [] as Sent[], sent: [] as Sent[] };
  const next = ctx.servers.map(() => 0);
  for (let round = 0; round < 4; round++) {
    const origin = await spawnOrigin(ctx.workspace, { LOG_REQUESTS: 'off', RATE_LIMIT: '0', INGEST_RATE_LIMIT: '0' });
    const before = log.answered.length;
    const clients = ctx.servers.flatMap((_, s) =>
      Array.from({ length: CLIENTS_PER_SERVER }, () => postUntilKilled(origin, s, next, base, log)),
    );
    // Killed at a random moment once this round has answered 200 samples (or 10 s went by), folds under way.
    const deadline = Date.now() + 10_000;
    while (log.answered.length - before < 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, Math.random() * 700));
    origin.child.kill('SIGKILL');
    await origin.exited;
    await Promise.all(clients);
  }
  assert.ok(log.answered.length > 400, `enough samples were answered (${log.answered.length})`);

  const origin = await spawnOrigin(ctx.workspace);
  try {
    // The restarted origin folded the journal before listening: the days hold every sample.
    const store = sampleStore(createFileStorage(ctx.workspace.storageDir));
    const key = (s: number, hour: number) => `${s}:${hour}`;
    const bitsOf = (samples: Sent[]) => {
      const bits = new Map<string, number>();
      for (const { server, hour, bit } of samples)
        bits.set(key(server, hour), (bits.get(key(server, hour)) ?? 0) | (1 << bit));
      return bits;
    };
    const answered = bitsOf(log.answered);
    const sent = bitsOf(log.sent);
    const problems: string[] = [];
    for (const [s, server] of ctx.servers.entries()) {
      for (const { hour, sum, count } of await store.range(server.id, base - 400 * HOUR, base + HOUR)) {
        const held = answered.get(key(s, hour)) ?? 0;
        if (sum.toString(2).replace(/0/g, '').length !== count)
          problems.push(`${s}@${hour}: a sample counted twice (${sum}, ${count})`);
        if ((sum & held) !== held) problems.push(`${s}@${hour}: an answered sample is missing`);
        if ((sum & ~(sent.get(key(s, hour)) ?? 0)) !== 0) problems.push(`${s}@${hour}: a sample never sent`);
        answered.delete(key(s, hour));
      }
    }
    for (const missing of answered.keys()) problems.push(`${missing}: the hour is missing`);
    assert.equal(problems.slice(0, 5), [], `${problems.length} problems in ${log.answered.length} answered samples`);
  } finally {
    origin.child.kill('SIGTERM');
    await origin.exited;
  }
});

kill.run();
