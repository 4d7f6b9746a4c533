import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import { runBuild } from '../build/build.ts';
import { aggregate, type Series } from '../server/charts/aggregate.ts';
import { drawPlayerChart } from '../server/charts/draw.ts';
import { EXAMPLE_NOW, exampleBuckets } from '../server/charts/example.ts';
import { sampleStore } from '../server/charts/samples.ts';
import { serverStore } from '../server/charts/servers.ts';
import { hashSecret, newSecret } from '../server/http/auth.ts';
import { createStorage } from 'unstorage';
import fsLiteDriver from 'unstorage/drivers/fs-lite';
import { createFileStorage } from '../server/storage.ts';
import { startProcess } from '../test/processes.ts';
import { benchIngestion } from './ingestion.ts';
import { median, report } from './harness.ts';

const TSX = ['--import', 'tsx'];

async function timeIt(run: () => unknown, count: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return median(times);
}

/** The same two-series chart, drawn by vega-lite to SVG in Node: the peer for the renderer. */
function vegaLiteSvg(series: Series): Promise<string> {
  const values = series.points.flatMap((p) => [
    { date: p.start, players: p.peak, line: 'Peak Players' },
    { date: p.start, players: p.average, line: 'Average Players' },
  ]);
  const spec: vegaLite.TopLevelSpec = {
    width: 800,
    height: 400,
    data: { values },
    mark: { type: 'area', line: true, point: true, opacity: 0.3 },
    encoding: {
      x: { field: 'date', type: 'temporal', title: null },
      y: { field: 'players', type: 'quantitative', stack: null, title: null },
      color: { field: 'line', type: 'nominal', scale: { range: ['#2563eb', '#16a34a'] } },
    },
  };
  return new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' }).toSVG();
}

/**
 * Charts: the renderer on a 365-day chart beside vega-lite; a cached chart answer over HTTP beside
 * a precomputed static answer; the store's atomic add() beside in-place writes; then ingestion
 * over HTTP (bench/ingestion.ts).
 */
export async function benchCharts(ws: { dataDir: string; distDir: string; dir: string }, rounds: number) {
  console.log(`\n# Charts (${rounds} rounds)`);
  const series = aggregate(exampleBuckets(365, EXAMPLE_NOW), { days: 365, now: EXAMPLE_NOW });
  const ours = await timeIt(() => drawPlayerChart(series, { width: 800, height: 400, theme: 'light' }), 200 * rounds);
  const peer = await timeIt(() => vegaLiteSvg(series), 10 * rounds);
  report('365-day chart render', ours, 'ms', 'vega-lite to SVG', peer, '< 1 ms');
  console.log(`${''.padEnd(34)} vega-lite takes ${(peer / ours).toFixed(0)}x as long (target >= 60x)`);

  await runBuild({ dataDir: ws.dataDir, distDir: ws.distDir });
  const storageDir = join(ws.dir, 'storage');
  const storage = createFileStorage(storageDir);
  const id = randomUUID();
  const ingestKey = newSecret('dpk');
  await serverStore(storage).add({
    id,
    owner: 'alice',
    private: false,
    ingestKeyHash: hashSecret(ingestKey),
    createdAt: new Date().toISOString(),
  });
  await sampleStore(storage).add(
    id,
    exampleBuckets(30, Date.now()).map((b) => ({ at: b.hour, players: b.max })),
  );
  const env = {
    HOST: '127.0.0.1',
    PORT: '4121',
    RATE_LIMIT: '0',
    INGEST_RATE_LIMIT: '0', // the bench posts as fast as one server key can
    DIST_DIR: ws.distDir,
    DATA_DIR: ws.dataDir,
    STORAGE_DIR: storageDir,
  };
  const origin = await startProcess(
    process.execPath,
    [...TSX, 'server/main.ts'],
    'http://127.0.0.1:4121/api/image/brand',
    env,
  );
  try {
    const chartUrl = `http://127.0.0.1:4121/api/servers/${id}/chart/players?days=30`;
    await fetch(chartUrl).then((r) => r.arrayBuffer());
    const cached = await timeIt(() => fetch(chartUrl).then((r) => r.arrayBuffer()), 300 * rounds);
    const staticAnswer = await timeIt(
      () => fetch('http://127.0.0.1:4121/api/charts/example').then((r) => r.arrayBuffer()),
      300 * rounds,
    );
    report('cached 30-day chart over HTTP', cached, 'ms', 'precomputed example', staticAnswer, '< 1 ms');
  } finally {
    await origin.stop();
  }

  // What atomic writes cost: the store's add() on the embedded store beside fs-lite's in-place
  // writes (no temporary file, no fsync, no lock: what a crash could tear), one sample at a time.
  const atomic = sampleStore(createFileStorage(join(ws.dir, 'atomic')));
  const inPlace = sampleStore(createStorage({ driver: fsLiteDriver({ base: join(ws.dir, 'in-place') }) }));
  const at = Date.now();
  const atomicPerSecond = await samplesPerSecond(count(rounds), 1, (i) => atomic.add(id, [{ at, players: i % 100 }]));
  const inPlacePerSecond = await samplesPerSecond(count(rounds), 1, (i) => inPlace.add(id, [{ at, players: i % 100 }]));
  report(
    'store add(), atomic + fsync + lock',
    atomicPerSecond,
    'smp/s',
    'in-place writes (before)',
    inPlacePerSecond,
    '>= 0.5',
  );
  await benchIngestion(ws, rounds);
}

const count = (rounds: number) => 500 * rounds;

/** Runs `send(i)` for i < total from `clients` loops at once; samples (calls) per second. */
async function samplesPerSecond(
  total: number,
  clients: number,
  send: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) await send(next++);
    }),
  );
  return total / ((performance.now() - started) / 1000);
}
