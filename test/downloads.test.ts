import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readConfig } from '../server/config.ts';
import type { DownloadCounts } from '../server/downloads/counts.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { createFileStorage, type Storage } from '../server/storage.ts';
import { currentTreeDir, openTree } from '../server/tree.ts';
import {
  findProgram,
  makeWorkspace,
  runDepot,
  startRedis,
  startTestOrigin,
  until,
  type RedisServer,
  type Workspace,
} from './helpers.ts';

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
    'not a log line',
  ];
  const file = join(ctx.workspace.dir, 'access.log');
  await writeFile(file, `${lines.join('\n')}\n`);
  const first = await runDepot(['counts', 'import', file], ctx.workspace);
  assert.is(first.code, 0, first.stderr);
  assert.equal(JSON.parse(first.stdout), {
    file,
    lines: 9,
    downloads: 4,
    counted: 2,
    tooOld: 1,
    unattributed: 1,
    malformed: 1,
    countableDays: 8,
  });
  const answer = await counts(ctx.origin);
  assert.is(answer.total, 10);
  assert.is(versionCounts(answer, ctx.paper).software.PaperMC, 3);
  const again = await runDepot(['counts', 'import', file], ctx.workspace);
  assert.is(JSON.parse(again.stdout).counted, 0);
  assert.is((await counts(ctx.origin)).total, 10);
  const missing = await runDepot(['counts', 'import', join(ctx.workspace.dir, 'none.log')], ctx.workspace);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /cannot read/);
});

counting.run();

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

  redis.run();
}
