import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { DownloadCounts } from '../server/downloads/counts.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { makeWorkspace, spawnOrigin, until, type OriginProcess } from './helpers.ts';
import { fillDisk, mountSmallDisk } from './small-disk.ts';

// Issue 27 item 4: downloads counted on a disk that fills up, through a real origin on loopback,
// with STORAGE_DIR on a real tmpfs of a few hundred KiB. A journal append that meets the full disk
// is cut back and retried; nothing answered is lost, and the counts answer 200 after a restart.

const env = (storageDir: string) => ({
  STORAGE_DIR: storageDir,
  TRUST_PROXY: '127.0.0.1',
  RATE_LIMIT: '0',
  LOG_REQUESTS: 'off',
});

const get = async (origin: OriginProcess, path: string) => {
  const response = await fetch(origin.url + path);
  return { status: response.status, body: (await response.json()) as unknown };
};
const stored = async (origin: OriginProcess) => {
  const { status, body } = await get(origin, '/api/plugin-versions/downloads');
  assert.is(status, 200, JSON.stringify(body));
  return (body as DownloadCounts).total;
};
const badge = async (origin: OriginProcess) => {
  const { status, body } = await get(origin, '/api/badges/downloads.json');
  assert.is(status, 200, JSON.stringify(body));
  return (body as { message: string }).message;
};
const download = async (origin: OriginProcess, path: string, client: string) => {
  const response = await fetch(origin.url + path, { headers: { 'x-forwarded-for': client } });
  await response.arrayBuffer();
  return response.status;
};
const stop = async (origin: OriginProcess) => {
  origin.child.kill('SIGTERM');
  await origin.exited;
};

test('a full disk loses no answered download, and the counts and the badge answer 200 after a restart', async () => {
  const disk = await mountSmallDisk(512);
  const workspace = await makeWorkspace();
  let origin: OriginProcess | undefined;
  try {
    const tree = await openTree((await currentTreeDir(workspace.distDir))!);
    const path = `/api/plugin-versions/download/${tree.catalog.versions[0]!.id}`;
    origin = await spawnOrigin(workspace, env(disk.dir));
    const client = (i: number) => `10.27.${i >> 8}.${i & 255}`;

    for (let i = 0; i < 40; i++) assert.is(await download(origin, path, client(i)), 200);
    await until(async () => (await stored(origin!)) === 40, '40 downloads stored', 10_000);

    // The disk fills; 300 more clients (about 15 KB of journal lines, pages the disk no longer has).
    assert.ok((await fillDisk(disk.dir)) > 0);
    for (let i = 40; i < 340; i++) assert.is(await download(origin, path, client(i)), 200);
    // Two flushes or more meet the full disk.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    // Meanwhile the counts answer, with every download stored before the disk filled.
    assert.ok((await stored(origin)) >= 40);
    assert.ok(Number(await badge(origin)) >= 40);

    // Space again: the queued downloads are stored at the next flush, none twice, none lost.
    await rm(join(disk.dir, 'filler'));
    await until(async () => (await stored(origin!)) === 340, 'every answered download stored', 15_000);
    const filled = origin;
    await stop(origin);

    origin = await spawnOrigin(workspace, env(disk.dir));
    assert.is(await stored(origin), 340);
    assert.is(await badge(origin), '340');
    // And counting goes on.
    assert.is(await download(origin, path, client(340)), 200);
    await until(async () => (await stored(origin!)) === 341, 'a download after the restart is counted', 10_000);
    // The first origin said it kept what it could not store (its log: JSON lines on stdout).
    assert.ok(filled.stdout.some((line) => line.includes('could not store')));
  } finally {
    if (origin && origin.child.exitCode === null) await stop(origin);
    await workspace.remove();
    await disk.unmount();
  }
});

test.run();
