import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createByteCache } from '../server/byte-cache.ts';
import { createFileStorage } from '../server/storage.ts';

const cache = suite('render cache in the embedded store');
const ctx = {} as { dir: string; now: number; png: Uint8Array };
cache.before(async () => {
  ctx.png = new Uint8Array(
    await sharp({ create: { width: 32, height: 32, channels: 4, background: '#3a7' } })
      .png()
      .toBuffer(),
  );
});
cache.before.each(async () => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'depot-cache-'));
  ctx.now = Date.parse('2026-11-23T12:00:00Z');
});
cache.after.each(() => rm(ctx.dir, { recursive: true, force: true }));
// A fresh cache over the same folder, without the in-process copy: as after a restart.
const open = () => createByteCache(createFileStorage(ctx.dir), 'brand-images', { now: () => ctx.now, memoryBytes: 1 });
const stored = (key: string) => join(ctx.dir, 'cache', 'brand-images', key);

cache('keeps the bytes as they are on disk (no base64), and they come back identical after a restart', async () => {
  await open().set('purpur-64.png', ctx.png, 3600);
  const file = await readFile(stored('purpur-64.png'));
  assert.ok(file.length < ctx.png.length + 16, `${file.length} bytes on disk for ${ctx.png.length} of image`);
  assert.ok(Buffer.from(file.subarray(file.length - ctx.png.length)).equals(ctx.png), 'the PNG itself is on disk');
  const again = await open().get('purpur-64.png');
  assert.ok(again && Buffer.from(again).equals(ctx.png));
  assert.is((await sharp(again).metadata()).width, 32);
});

cache('an entry expires at its TTL across restarts; a keep-forever entry does not', async () => {
  await open().set('chart.svg', ctx.png, 300);
  ctx.now += 299_000;
  assert.ok(await open().get('chart.svg'), 'fresh a second before its TTL');
  ctx.now += 2_000;
  assert.is(await open().get('chart.svg'), null, 'expired a second after it');
  await open().set('forever.png', ctx.png, null);
  ctx.now += 365 * 86_400_000;
  assert.ok(await open().get('forever.png'));
});

cache('a torn, foreign or former-layout entry is a miss, and the next write replaces it', async () => {
  await open().set('a.png', ctx.png, 3600);
  const former = JSON.stringify({ expiresAt: null, data: Buffer.from(ctx.png).toString('base64') });
  for (const content of [former, 'DPC', Buffer.alloc(0), 'not an entry at all']) {
    await writeFile(stored('a.png'), content);
    assert.is(await open().get('a.png'), null, `${JSON.stringify(String(content).slice(0, 20))} reads as a miss`);
  }
  await open().set('a.png', ctx.png, 3600);
  assert.ok(await open().get('a.png'));
});
cache.run();
