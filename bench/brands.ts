import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { runBuild } from '../build/build.ts';
import { ENCODER_SETTINGS, type RasterFormat } from '../server/brands/formats.ts';
import { startProcess } from '../test/processes.ts';
import { fmt, median, report } from './harness.ts';

const TSX = ['--import', 'tsx'];

/** Median latency in ms of `count` sequential requests (keep-alive), and the answer's size. */
async function latency(url: string, count: number): Promise<{ ms: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(url);
    const body = await response.arrayBuffer();
    times.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`${url}: ${response.status} ${new TextDecoder().decode(body)}`);
    bytes = body.byteLength;
  }
  return { ms: median(times), bytes };
}

async function timeInProcess(run: () => Promise<Buffer>, count: number): Promise<{ ms: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    bytes = (await run()).length;
    times.push(performance.now() - started);
  }
  return { ms: median(times), bytes };
}

function encode(image: Sharp, format: RasterFormat, tuned: boolean): Promise<Buffer> {
  if (format === 'png') return image.png(tuned ? ENCODER_SETTINGS.png : {}).toBuffer();
  if (format === 'webp') return image.webp(tuned ? ENCODER_SETTINGS.webp : {}).toBuffer();
  if (format === 'gif') return image.gif(tuned ? ENCODER_SETTINGS.gif : {}).toBuffer();
  return image
    .flatten({ background: '#ffffff' })
    .jpeg(tuned ? ENCODER_SETTINGS.jpg : {})
    .toBuffer();
}

/**
 * Brand images over HTTP: a cached answer, an uncached original and uncached resizes, each beside
 * the same operation in raw sharp in-process (the floor) and through ipx (the peer); then the
 * encoder settings against sharp's defaults, times and bytes, at the sizes SPEC 8's 200 ms covers.
 */
export async function benchBrands(ws: { dataDir: string; distDir: string; dir: string }, rounds: number) {
  console.log(`\n# Brand images (median latency of sequential requests over HTTP, ${rounds} rounds)`);
  await runBuild({ dataDir: ws.dataDir, distDir: ws.distDir });
  const env = {
    HOST: '127.0.0.1',
    RATE_LIMIT: '0',
    DIST_DIR: ws.distDir,
    DATA_DIR: ws.dataDir,
    STORAGE_DIR: join(ws.dir, 'storage'),
  };
  const probe = '/api/image/brand';
  const servers = [
    await startProcess(process.execPath, [...TSX, 'server/main.ts'], `http://127.0.0.1:4111${probe}`, {
      ...env,
      PORT: '4111',
    }),
    await startProcess(process.execPath, [...TSX, 'server/main.ts'], `http://127.0.0.1:4112${probe}`, {
      ...env,
      PORT: '4112',
      IMAGE_CACHE: 'off',
    }),
    await startProcess(
      process.execPath,
      [...TSX, 'bench/ipx-server.ts', join(ws.dataDir, 'brands'), '4113'],
      'http://127.0.0.1:4113/_/folia/default.png',
    ),
    await startProcess(
      process.execPath,
      [...TSX, 'bench/sharp-baseline.ts', join(ws.dataDir, 'brands/papermc/light.png'), '4114'],
      'http://127.0.0.1:4114/?size=8&format=png',
    ),
  ];
  const [origin, uncached, ipx, rawHttp] = [
    'http://127.0.0.1:4111',
    'http://127.0.0.1:4112',
    'http://127.0.0.1:4113',
    'http://127.0.0.1:4114',
  ];
  try {
    const source = await readFile(join(ws.dataDir, 'brands/papermc/light.png'));
    const cachedPath = '/api/image/brand/papermc?variant=light&size=300&format=webp';
    await fetch(origin + cachedPath).then((r) => r.arrayBuffer());
    const cached = await latency(origin + cachedPath, 300 * rounds);
    const staticFile = await latency(`${origin}/brand/papermc/light/256.webp`, 300 * rounds);
    report('cached 300 px webp: origin', cached.ms, 'ms', 'precomputed file, same', staticFile.ms, '< 1 ms');

    const original = await latency(`${uncached}/api/image/brand/papermc?variant=light`, 100 * rounds);
    const ipxOriginal = await latency(`${ipx}/_/papermc/light.png`, 20 * rounds);
    const readOriginal = await timeInProcess(
      () => readFile(join(ws.dataDir, 'brands/papermc/light.png')),
      100 * rounds,
    );
    report('uncached original: origin', original.ms, 'ms', 'readFile in-process', readOriginal.ms, '< 5 ms');
    report('uncached original: origin', original.ms, 'ms', 'ipx', ipxOriginal.ms);

    // Interleaved, one request of each kind in turn, so drift on a noisy machine hits all alike.
    for (const size of [64, 512, 2048]) {
      for (const format of ['png', 'webp'] as const) {
        const samples = { ours: [] as number[], raw: [] as number[], rawHttp: [] as number[], peer: [] as number[] };
        const bytes = { ours: 0, peer: 0 };
        for (let i = 0; i < (size === 2048 ? 5 : 15) * rounds; i++) {
          const ours = await latency(
            `${uncached}/api/image/brand/papermc?variant=light&size=${size}&format=${format}`,
            1,
          );
          samples.ours.push(ours.ms);
          bytes.ours = ours.bytes;
          samples.raw.push(
            (await timeInProcess(() => encode(sharp(source).resize({ width: size }), format, true), 1)).ms,
          );
          samples.rawHttp.push((await latency(`${rawHttp}/?size=${size}&format=${format}`, 1)).ms);
          const peer = await latency(`${ipx}/w_${size},f_${format}/papermc/light.png`, 1);
          samples.peer.push(peer.ms);
          bytes.peer = peer.bytes;
        }
        const [ours, raw, overHttp, peer] = [
          median(samples.ours),
          median(samples.raw),
          median(samples.rawHttp),
          median(samples.peer),
        ];
        report(`uncached ${size} px ${format}: origin`, ours, 'ms', 'raw sharp in-process', raw, '<= 1.10');
        report(`uncached ${size} px ${format}: origin`, ours, 'ms', 'raw sharp behind node:http', overHttp);
        report(`uncached ${size} px ${format}: ipx`, peer, 'ms', 'raw sharp in-process', raw);
        console.log(
          `${''.padEnd(34)} bytes: origin ${fmt(bytes.ours / 1024)} KiB, ipx ${fmt(bytes.peer / 1024)} KiB (ipx does not enlarge past the 1600 px source)`,
        );
      }
    }
  } finally {
    for (const server of servers) await server.stop();
  }

  console.log('\n# Encoder settings vs sharp defaults (raw sharp, square 1024 px source; SPEC 8: < 200 ms to 1024 px)');
  const square = await readFile(join(ws.dataDir, 'brands/velocity/blue-no-text.png'));
  for (const format of ['png', 'webp', 'jpg', 'gif'] as const) {
    for (const size of [256, 512, 1024]) {
      const count = 3 * rounds;
      const tuned = await timeInProcess(() => encode(sharp(square).resize({ width: size }), format, true), count);
      const defaults = await timeInProcess(() => encode(sharp(square).resize({ width: size }), format, false), count);
      report(
        `${format} ${size} px, ours (${fmt(tuned.bytes / 1024)} KiB)`,
        tuned.ms,
        'ms',
        `defaults (${fmt(defaults.bytes / 1024)} KiB)`,
        defaults.ms,
        '< 200 ms',
      );
    }
  }
}
