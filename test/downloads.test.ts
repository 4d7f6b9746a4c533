import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readConfig } from '../server/config.ts';
import { redisReady } from '../server/redis.ts';
import type { DownloadCounts } from '../server/downloads/counts.ts';
import { MAX_SKETCH_ERROR } from '../server/downloads/client-sketch.ts';
import { digestHex } from '../server/downloads/digest-set.ts';
import { countedOf, type Counted } from '../server/downloads/counted.ts';
import { downloadStore, type DownloadStore } from '../server/downloads/store.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { createFileStorage, openStateStore, type Storage } from '../server/storage.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import {
  ROOT,
  findProgram,
  makeWorkspace,
  runDepot,
  workspaceEnv,
  type CliResult,
  spawnOrigin,
  startRedis,
  startTestOrigin,
  until,
  type RedisServer,
  type Workspace,
} from './helpers.ts';
import { collectLog } from './collect-log.ts';

// Issue 17 item 1: JAR downloads counted by the origin that serves them, through real HTTP.

const ctx = {} as {
  workspace: Workspace;
  storage: Storage;
  origin: RunningOrigin;
  /** The newest version (first in the catalog) and the version latest/papermc answers. */
  newest: string;
  paper: string;
};

/** The origin believes X-Forwarded-For from loopback, so each request can name its client. */
const start = () => startTestOrigin(ctx.workspace, { storage: ctx.storage, trustProxy: ['127.0.0.1'] });

const download = async (origin: RunningOrigin, path: string, client: string, headers: Record<string, string> = {}) => {
  const response = await fetch(origin.url + path, { headers: { 'x-forwarded-for': client, ...headers } });
  await response.arrayBuffer();
  return response.status;
};
const counts = async (origin: RunningOrigin): Promise<DownloadCounts> => {
  const response = await fetch(`${origin.url}/api/plugin-versions/downloads`);
  assert.is(response.status, 200);
  return (await response.json()) as DownloadCounts;
};
const versionCounts = (answer: DownloadCounts, id: string) => answer.versions.find((version) => version.id === id)!;
/** Counts reach the store within about a second: wait for `total`, then a little longer to see nothing more comes. */
const settledCounts = async (origin: RunningOrigin, total: number): Promise<DownloadCounts> => {
  await until(async () => (await counts(origin)).total >= total, `${total} downloads counted`, 10_000);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  return counts(origin);
};

/** `npm run depot -- <args>` as an operator types it, on the workspace's folders; stdout without npm's banner. */
const runNpmDepot = (args: string[], workspace: Workspace): Promise<CliResult> =>
  new Promise((done) => {
    execFile(
      'npm',
      ['run', 'depot', '--', ...args],
      { cwd: ROOT, env: workspaceEnv(workspace), timeout: 120_000 },
      (error, stdout, stderr) =>
        done({
          code: error ? Number(error.code ?? 1) : 0,
          // npm prints `> package@version script` and the command line before the script's output.
          stdout: stdout.replace(/^(\s*\n|> .*\n)*/, ''),
          stderr,
        }),
    );
  });

const counting = suite('download counts on the embedded store');
counting.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.storage = createFileStorage(ctx.workspace.storageDir);
  ctx.origin = await start();
  const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  ctx.newest = tree.catalog.versions[0]!.id;
  const latest = await fetch(`${ctx.origin.url}/api/plugin-versions/latest/papermc`);
  ctx.paper = ((await latest.json()) as { version: { id: string } }).version.id;
});
counting.after(async () => {
  await ctx.origin.close();
  await ctx.storage.dispose();
  await ctx.workspace.remove();
});

counting('nothing counted yet: zeros, every catalog version, 365 days ending today, cached 5 minutes', async () => {
  const response = await fetch(`${ctx.origin.url}/api/plugin-versions/downloads`);
  assert.is(response.headers.get('cache-control'), 'public, max-age=300');
  const answer = (await response.json()) as DownloadCounts;
  assert.is(answer.total, 0);
  assert.is(answer.versions[0]!.id, ctx.newest);
  assert.is(answer.daily.length, 365);
  assert.is(answer.daily.at(-1)!.date, new Date().toISOString().slice(0, 10));
  assert.ok(answer.daily.every((day) => day.downloads === 0));
});

counting('each client counts once per version and day: retries, range requests and /64 neighbours', async () => {
  const direct = `/api/plugin-versions/download/${ctx.newest}`;
  // One client, three times (a retry), one whole and two ranges: one download.
  assert.is(await download(ctx.origin, direct, '198.51.100.1'), 200);
  assert.is(await download(ctx.origin, direct, '198.51.100.1'), 200);
  assert.is(await download(ctx.origin, direct, '198.51.100.2', { range: 'bytes=0-99' }), 206);
  assert.is(await download(ctx.origin, direct, '198.51.100.2', { range: 'bytes=100-' }), 206);
  // Two addresses of one /64 are one subscriber; the next /64 is another.
  assert.is(await download(ctx.origin, direct, '2001:db8:1:2::1'), 200);
  assert.is(await download(ctx.origin, direct, '2001:db8:1:2:ffff:ffff:ffff:ffff'), 200);
  assert.is(await download(ctx.origin, direct, '2001:db8:1:3::1'), 200);
  // Not downloads: HEAD, and a 304 revalidation.
  const head = await fetch(ctx.origin.url + direct, { method: 'HEAD', headers: { 'x-forwarded-for': '198.51.100.3' } });
  assert.is(head.status, 200);
  const etag = head.headers.get('etag')!;
  assert.is(await download(ctx.origin, direct, '198.51.100.4', { 'if-none-match': etag }), 304);
  const answer = await settledCounts(ctx.origin, 4);
  assert.is(answer.total, 4);
  assert.is(answer.direct, 4);
  assert.equal(versionCounts(answer, ctx.newest), {
    ...versionCounts(answer, ctx.newest),
    total: 4,
    direct: 4,
  });
  assert.is(answer.daily.at(-1)!.downloads, 4);
});

counting('latest and resolve count under the software the URL names, precomputed or live', async () => {
  // Precomputed in the tree (lowercase) and live (another letter case): the same version, two clients.
  assert.is(await download(ctx.origin, '/api/plugin-versions/download/latest/papermc', '203.0.113.1'), 200);
  assert.is(await download(ctx.origin, '/api/plugin-versions/download/latest/PaperMC', '203.0.113.2'), 200);
  assert.is(await download(ctx.origin, '/api/plugin-versions/download/resolve/Purpur', '203.0.113.3'), 200);
  const answer = await settledCounts(ctx.origin, 7);
  assert.is(answer.total, 7);
  assert.is(answer.software.PaperMC, 2);
  assert.is(answer.software.Purpur, 1);
  assert.is(versionCounts(answer, ctx.paper).software.PaperMC, 2);
});

counting('counts and who was counted survive a restart', async () => {
  await ctx.origin.close();
  ctx.origin = await start();
  assert.is((await counts(ctx.origin)).total, 7);
  // The same client and version on the same day is still counted once.
  assert.is(await download(ctx.origin, `/api/plugin-versions/download/${ctx.newest}`, '198.51.100.1'), 200);
  assert.is(await download(ctx.origin, `/api/plugin-versions/download/${ctx.newest}`, '198.51.100.9'), 200);
  assert.is((await settledCounts(ctx.origin, 8)).total, 8);
});

counting('DOWNLOAD_COUNTS=off: the origin counts nothing, and still answers the stored counts', async () => {
  assert.throws(() => readConfig({ DOWNLOAD_COUNTS: 'no' }), /DOWNLOAD_COUNTS: must be on or off/);
  assert.is(readConfig({ DOWNLOAD_COUNTS: 'off' }).downloadCounts, false);
  const quiet = await startTestOrigin(ctx.workspace, {
    storage: ctx.storage,
    trustProxy: ['127.0.0.1'],
    downloadCounts: false,
  });
  try {
    assert.is(await download(quiet, `/api/plugin-versions/download/${ctx.newest}`, '198.51.100.77'), 200);
    assert.is(await download(quiet, '/api/plugin-versions/download/latest/papermc', '198.51.100.77'), 200);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.is((await counts(quiet)).total, 8);
  } finally {
    await quiet.close();
  }
  assert.is((await counts(ctx.origin)).total, 8);
});

/** A line as nginx's `depot` log_format writes it (README): combined, then Content-Location. */
function logLine(client: string, at: Date, request: string, status: number, location?: string): string {
  // `Wed, 25 Nov 2026 15:30:00 GMT` -> `25/Nov/2026:15:30:00 +0000`
  const [, day, month, year, time] = at.toUTCString().replace(',', '').split(' ');
  const line = `${client} - - [${day}/${month}/${year}:${time} +0000] "${request} HTTP/1.1" ${status} 512 "-" "curl/8.5.0"`;
  return location === undefined ? line : `${line} "${location}"`;
}

counting("`depot counts import` adds nginx's downloads, deduplicated with the origin's, idempotently", async () => {
  const now = new Date();
  const { catalog } = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const otherSoftware = SERVER_SOFTWARE.find((name) => !catalog.byId.get(ctx.paper)!.serverSoftware.includes(name))!;
  const direct = `GET /api/plugin-versions/download/${ctx.newest}`;
  const lines = [
    logLine('198.51.100.1', now, direct, 200), // counted by the origin already today
    logLine('198.51.100.50', now, direct, 200),
    logLine('198.51.100.50', now, direct, 206),
    logLine(
      '2001:db8:9:9::1',
      now,
      'GET /api/plugin-versions/download/latest/papermc',
      200,
      `/api/plugin-versions/download/${ctx.paper}`,
    ),
    logLine('2001:db8:9:9::2', now, 'GET /api/plugin-versions/download/latest/papermc', 200, '-'),
    logLine('198.51.100.51', now, direct.replace('GET', 'HEAD'), 200),
    logLine('198.51.100.52', now, direct, 304),
    logLine('198.51.100.53', new Date(now.getTime() - 10 * 86_400_000), direct, 200),
    logLine('198.51.100.54', new Date(now.getTime() + 2 * 86_400_000), direct, 200),
    // A log is outside input: a version the catalog does not hold, or a software its version does not run on.
    logLine('198.51.100.55', now, 'GET /api/plugin-versions/download/plugin-9999999999999-nosuch', 200),
    logLine(
      '198.51.100.56',
      now,
      `GET /api/plugin-versions/download/latest/${otherSoftware.toLowerCase()}`,
      200,
      `/api/plugin-versions/download/${ctx.paper}`,
    ),
    'not a log line',
  ];
  const file = join(ctx.workspace.dir, 'access.log');
  await writeFile(file, `${lines.join('\n')}\n`);
  const first = await runDepot(['counts', 'import', file], ctx.workspace);
  assert.is(first.code, 0, first.stderr);
  assert.equal(JSON.parse(first.stdout), {
    file,
    lines: 12,
    downloads: 4,
    counted: 2,
    tooOld: 1,
    future: 1,
    unknownVersion: 1,
    otherSoftware: 1,
    unattributed: 1,
    malformed: 1,
    countableDays: 8,
  });
  const answer = await counts(ctx.origin);
  assert.is(answer.total, 10);
  assert.is(answer.versions.length, catalog.versions.length, 'no version the log made up');
  assert.is(answer.software[otherSoftware], 0);
  assert.is(versionCounts(answer, ctx.paper).software.PaperMC, 3);
  const again = await runDepot(['counts', 'import', file], ctx.workspace);
  assert.is(JSON.parse(again.stdout).counted, 0);
  assert.is((await counts(ctx.origin)).total, 10);
  const missing = await runDepot(['counts', 'import', join(ctx.workspace.dir, 'none.log')], ctx.workspace);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /cannot read/);
});

// Issue 27 item 7: the downloads badge sums the counts again at most every few seconds.
counting(
  'the downloads badge is kept a few seconds: a count from another process shows after it, not per request',
  async () => {
    const badge = async () =>
      ((await (await fetch(`${ctx.origin.url}/api/badges/downloads.json`)).json()) as { message: string }).message;
    const before = (await counts(ctx.origin)).total;
    assert.is(await badge(), String(before));
    // Another process (the CLI's import) counts a download into the same store.
    const other = downloadStore(ctx.storage);
    assert.is(
      await other.add([
        countedOf({
          day: Math.floor(Date.now() / 86_400_000),
          versionId: ctx.newest,
          software: undefined,
          client: '192.0.2.99',
        }),
      ]),
      1,
    );
    assert.is((await counts(ctx.origin)).total, before + 1, 'the counts endpoint reads it at once');
    assert.is(await badge(), String(before), 'the badge answers its kept total');
    await until(async () => (await badge()) === String(before + 1), 'the badge shows it after a few seconds', 10_000);
  },
);

counting.run();

// Item 2 of the follow-up: the embedded store writes a flush's batch alone, and survives kill -9.
const journal = suite("the embedded store's journal");
const files = {} as { workspace: Workspace };
journal.before(async () => {
  files.workspace = await makeWorkspace();
});
journal.after(() => files.workspace.remove());

const VERSION = 'plugin-1768035600000-f8d161e085';
const TODAY = Math.floor(Date.now() / 86_400_000);
const journalFile = (storageDir: string, day: number) => join(storageDir, 'downloads', 'journal', String(day));
const clients = (from: number, count: number): Counted[] =>
  Array.from({ length: count }, (_, i) =>
    countedOf({
      day: TODAY,
      versionId: VERSION,
      software: undefined,
      client: `10.0.${Math.floor((from + i) / 256)}.${(from + i) % 256}`,
    }),
  );
const total = async (store: DownloadStore) => (await store.read()).reduce((sum, count) => sum + count.downloads, 0);

journal(
  'a flush appends its batch alone; a torn last line is skipped, then cut; a past day is closed into one record',
  async () => {
    const dir = join(files.workspace.dir, 'journal-store');
    const storage = createFileStorage(dir);
    try {
      const store = downloadStore(storage);
      assert.is(await store.add(clients(0, 500)), 500);
      const before = (await stat(journalFile(dir, TODAY))).size;
      // One new client among 99 known: one line more, whatever the day holds.
      assert.is(await store.add([...clients(0, 99), ...clients(500, 1)]), 1);
      const line = (await stat(journalFile(dir, TODAY))).size - before;
      assert.is(line, `0123456789abcdef ${VERSION} -\n`.length);
      assert.not.ok(existsSync(join(dir, 'downloads', 'seen')), 'no seen-digests file is kept');

      // A writer killed mid-line: readers skip the torn line, the next writer cuts it off.
      await appendFile(journalFile(dir, TODAY), `0123456789abcdef ${VERSION.slice(0, 12)}`);
      const another = downloadStore(storage); // another process: reads the journal from its start
      assert.is(await total(another), 501);
      assert.is(await another.add(clients(501, 1)), 1);
      const lines = (await readFile(journalFile(dir, TODAY), 'utf8')).split('\n');
      assert.is(lines.pop(), '');
      assert.is(lines.length, 502);
      assert.ok(lines.every((text) => /^[0-9a-f]{16} plugin-\S+ -$/.test(text)));
      assert.is(await total(store), 502, 'the first store reads what the other appended');

      // Nine days on, the day can no longer be counted: its counts become one record, the journal goes.
      const later = downloadStore(storage, undefined, () => Date.now() + 9 * 86_400_000);
      assert.is(await total(later), 502);
      assert.not.ok(existsSync(journalFile(dir, TODAY)));
      assert.equal(JSON.parse(await readFile(join(dir, 'downloads', 'counts', String(TODAY)), 'utf8')), {
        [`${VERSION} -`]: 502,
      });
      assert.is(await later.add(clients(600, 5)), 0, 'a closed day counts no more');
      assert.is(await total(downloadStore(storage)), 502);
    } finally {
      await storage.dispose();
    }
  },
);

/** A spawned origin that believes loopback's X-Forwarded-For, the newest version's download, and what /downloads says. */
const spawned = { TRUST_PROXY: '127.0.0.1', RATE_LIMIT: '0', LOG_REQUESTS: 'off' };
const newestDownload = async () =>
  `/api/plugin-versions/download/${(await openTree((await currentTreeDir(files.workspace.distDir))!)).catalog.versions[0]!.id}`;
const stored = async (url: string) =>
  ((await (await fetch(`${url}/api/plugin-versions/downloads`)).json()) as DownloadCounts).total;

journal('kill -9 of a counting origin loses no count it had stored', async () => {
  const path = await newestDownload();
  let acknowledged = 0;
  let next = 0;
  for (let round = 0; round < 3; round++) {
    const origin = await spawnOrigin(files.workspace, spawned);
    assert.ok((await stored(origin.url)) >= acknowledged, `round ${round}: every count stored before survives`);
    // Downloads from new clients until the kill, 1.2 to 2.5 s in: flushes run meanwhile, one may be cut.
    // What /downloads answered before the kill was stored.
    const stop = Date.now() + 1200 + Math.random() * 1300;
    const senders = Array.from({ length: 4 }, async () => {
      while (Date.now() < stop + 1000) {
        const client = `10.9.${Math.floor(next / 256) % 256}.${next++ % 256}`;
        const status = await fetch(origin.url + path, { headers: { 'x-forwarded-for': client } })
          .then((response) => response.arrayBuffer().then(() => response.status))
          .catch(() => 0);
        if (status === 0) return; // killed
        assert.is(status, 200);
      }
    });
    while (Date.now() < stop) {
      acknowledged = Math.max(acknowledged, await stored(origin.url));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    origin.child.kill('SIGKILL');
    await Promise.all([origin.exited, ...senders]);
  }
  assert.ok(acknowledged > 0, 'some downloads were stored before the kills');
  const last = await spawnOrigin(files.workspace, spawned);
  try {
    assert.ok((await stored(last.url)) >= acknowledged);
    assert.is(await download({ url: last.url } as RunningOrigin, path, '10.10.0.1'), 200);
    await until(async () => (await stored(last.url)) > acknowledged, 'a download after the kills is counted', 10_000);
  } finally {
    last.child.kill('SIGTERM');
    await last.exited;
  }
});

journal('an origin stopped (SIGTERM) right after its downloads stores them before it exits', async () => {
  const path = await newestDownload();
  const origin = await spawnOrigin(files.workspace, spawned);
  const before = await stored(origin.url);
  // 30 new clients and a repeat of each, stopped well within the second before a flush.
  for (const round of [0, 1])
    for (let i = 0; i < 30; i++)
      assert.is(await download({ url: origin.url } as RunningOrigin, path, `10.11.0.${i}`), 200, `round ${round}`);
  origin.child.kill('SIGTERM');
  await origin.exited;
  const again = await spawnOrigin(files.workspace, spawned);
  try {
    assert.is(await stored(again.url), before + 30);
  } finally {
    again.child.kill('SIGTERM');
    await again.exited;
  }
});

// Issue 27 item 4: a journal torn by a full disk is read past (with a warning) and repaired.
journal(
  'a torn or malformed line is skipped with one warning; `npm run depot -- counts repair` rewrites it out',
  async () => {
    const storageDir = join(files.workspace.dir, 'torn-store');
    const storage = createFileStorage(storageDir);
    try {
      const warnings: string[] = [];
      const store = downloadStore(storage, undefined, Date.now, { log: collectLog(warnings) });
      assert.is(await store.add(clients(1000, 10)), 10);
      // What the old append left on a full disk: half a line, the next flush's whole line after it on
      // the same line, then a line that is no record at all.
      const [whole] = clients(1010, 1);
      const wholeLine = `${digestHex(whole!)} ${VERSION} -`;
      await appendFile(
        journalFile(storageDir, TODAY),
        `0123456789abcdef ${VERSION.slice(0, 10)}${wholeLine}\n#garbage\n`,
      );
      const reader = downloadStore(storage, undefined, Date.now, { log: collectLog(warnings) });
      assert.is(await total(reader), 11, 'the whole line after the torn half is counted');
      assert.is(await total(reader), 11);
      assert.is(warnings.length, 1, 'warned once for the file');
      assert.match(warnings[0]!, /downloads:journal:\d+ holds 2 malformed line\(s\).*counts repair/);
      // Counting goes on: a new client lands on a line of its own.
      assert.is(await reader.add(clients(1011, 1)), 1);

      const repair = await runNpmDepot(['counts', 'repair'], { ...files.workspace, storageDir });
      assert.is(repair.code, 0, repair.stderr);
      const report = JSON.parse(repair.stdout) as {
        journals: number;
        dropped: number;
        repaired: { day: string; kept: number; dropped: number; droppedText: string[] }[];
      };
      assert.equal(report, {
        journals: 1,
        repaired: [
          {
            day: new Date(TODAY * 86_400_000).toISOString().slice(0, 10),
            kept: 12,
            dropped: 2,
            droppedText: [`0123456789abcdef ${VERSION.slice(0, 10)}`, '#garbage'],
          },
        ],
        dropped: 2,
      });
      const lines = (await readFile(journalFile(storageDir, TODAY), 'latin1')).split('\n');
      assert.is(lines.pop(), '');
      assert.is(lines.length, 12);
      assert.ok(lines.every((text) => /^[0-9a-f]{16} plugin-\S+ -$/.test(text)));
      // A reader that knew the old file reads the new one from its start; a new one warns no more.
      assert.is(await total(reader), 12);
      assert.is(await total(downloadStore(storage, undefined, Date.now, { log: collectLog(warnings) })), 12);
      assert.is(warnings.length, 1);
      const again = await runNpmDepot(['counts', 'repair'], { ...files.workspace, storageDir });
      assert.equal(JSON.parse(again.stdout), { journals: 1, repaired: [], dropped: 0 });
    } finally {
      await storage.dispose();
    }
  },
);

journal(
  'a year of closed days is parsed once: a second read hands back the same records, and the total is kept',
  async () => {
    const dir = join(files.workspace.dir, 'year-store');
    const storage = createFileStorage(dir);
    try {
      const days = Array.from({ length: 365 }, (_, i) => TODAY - 364 + i);
      const closedDays = days.filter((day) => day < TODAY - 8);
      await storage.setItem('downloads:days', days);
      for (const day of closedDays)
        await storage.setItem(`downloads:counts:${day}`, { [`${VERSION} -`]: 2, [`${VERSION} PaperMC`]: 3 });
      const store = downloadStore(storage);
      const first = await store.read();
      assert.is(first.length, closedDays.length * 2);
      const second = await store.read();
      // A parse builds new records; the same ones mean the closed days were not parsed again.
      assert.is(second.length, first.length);
      assert.ok(
        second.every((count, i) => count === first[i]),
        'the second read re-parsed the closed days',
      );
      const year = closedDays.length * 5;
      assert.is(await store.total(), year);
      // Another process counts today: this store's total is kept a few seconds (TOTAL_TTL_MS)...
      assert.is(await downloadStore(storage).add(clients(2000, 3)), 3);
      assert.is(await store.total(), year);
      // ...unless this process counts itself, which sums again (and reads the other's lines).
      assert.is(await store.add(clients(2003, 1)), 1);
      assert.is(await store.total(), year + 4);
      assert.is(await total(store), year + 4);
    } finally {
      await storage.dispose();
    }
  },
);

journal.run();

// REDIS_URL: every origin counts into one real redis-server.
const REDIS = findProgram('redis-server');
if (!REDIS) console.warn('downloads.test.ts: redis-server not installed, the Redis test is not run');
else {
  const shared = {} as { workspace: Workspace; redis: RedisServer; origins: RunningOrigin[] };
  const redis = suite('download counts in Redis, two origins');
  redis.before(async () => {
    shared.workspace = await makeWorkspace();
    shared.redis = await startRedis(REDIS);
    const options = { redisUrl: shared.redis.url, trustProxy: ['127.0.0.1'] };
    shared.origins = [
      await startTestOrigin(shared.workspace, options),
      await startTestOrigin(shared.workspace, options),
    ];
  });
  redis.after(async () => {
    for (const origin of shared.origins ?? []) await origin.close();
    await shared.redis.stop();
    await shared.workspace.remove();
  });

  redis('two origins at once lose no count and count a client once between them', async () => {
    const tree = await openTree((await currentTreeDir(shared.workspace.distDir))!);
    const id = tree.catalog.versions[0]!.id;
    // 60 clients, each downloading from both origins at once: 120 answers, 60 downloads.
    const statuses = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        download(shared.origins[i % 2]!, `/api/plugin-versions/download/${id}`, `192.0.2.${Math.floor(i / 2) + 1}`),
      ),
    );
    assert.ok(statuses.every((status) => status === 200));
    for (const origin of shared.origins) assert.is((await settledCounts(origin, 60)).total, 60);
  });

  redis('past the exact bound a day counts in a HyperLogLog per field, within the documented error', async () => {
    const { storage, redis: client } = openStateStore({
      storageDir: shared.workspace.storageDir,
      redisUrl: shared.redis.url,
    });
    try {
      assert.ok(await redisReady(client!, 5000));
      const store = downloadStore(storage, client, Date.now, { exactClients: 50 });
      const day = TODAY + 1; // a day of its own in this Redis
      const many = Array.from({ length: 3000 }, (_, i) =>
        countedOf({ day, versionId: VERSION, software: 'Folia', client: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}` }),
      );
      const added = (await store.add(many)) + (await store.add(many));
      const stored = (await store.read()).find((count) => count.day === day && count.software === 'Folia')!.downloads;
      assert.ok(Math.abs(stored - 3000) <= MAX_SKETCH_ERROR * 3000 + 1, `${stored} for 3000`);
      assert.is(added, stored, 'what add said it counted is what is stored');
      assert.is(await client!.scard(`depot:downloads:seen:${day}`), 50, 'the exact set stops at its bound');
    } finally {
      await client?.quit().catch(() => {});
      await storage.dispose();
    }
  });

  redis.run();
}
