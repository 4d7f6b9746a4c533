import type { Element } from '@xmldom/xmldom';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { all, byClass, parseSvg } from './svg.ts';
import { aggregate, type HourBucket, type Series } from '../server/charts/aggregate.ts';
import { drawPlayerChart } from '../server/charts/draw.ts';
import { sampleStore } from '../server/charts/samples.ts';
import { createMemoryStorage } from '../server/storage.ts';
import { THEMES } from '../server/charts/themes.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

const H = 3_600_000;
const at = (iso: string) => Date.parse(iso);
const bucket = (iso: string, max: number, sum: number, count: number): HourBucket => ({
  hour: at(iso),
  max,
  sum,
  count,
});

const folding = suite('aggregate');
folding('days <= 2: one point per hour, ending with the hour of now; gaps are null', () => {
  const series = aggregate([bucket('2026-03-10T10:00:00Z', 9, 12, 3), bucket('2026-03-10T12:00:00Z', 4, 4, 1)], {
    days: 1,
    now: at('2026-03-10T12:59:00Z'),
  });
  assert.is(series.period, 'hour');
  assert.is(series.points.length, 24);
  assert.is(series.points.at(-1)!.start, at('2026-03-10T12:00:00Z'));
  assert.equal(series.points.at(-3), { start: at('2026-03-10T10:00:00Z'), peak: 9, average: 4 });
  assert.equal(series.points.at(-2), { start: at('2026-03-10T11:00:00Z'), peak: null, average: null });
  assert.equal(series.points.at(-1), { start: at('2026-03-10T12:00:00Z'), peak: 4, average: 4 });
});
folding('days > 2: one point per UTC day; peak is the highest sample, average the mean of all samples', () => {
  const series = aggregate(
    [
      bucket('2026-03-08T23:00:00Z', 50, 100, 4), // the 8th, last hour
      bucket('2026-03-09T00:00:00Z', 10, 20, 4), // the 9th, first hour: a different day
      bucket('2026-03-09T13:00:00Z', 30, 40, 2),
      bucket('2026-03-01T00:00:00Z', 999, 999, 1), // before the range
    ],
    { days: 3, now: at('2026-03-10T08:00:00Z') },
  );
  assert.is(series.period, 'day');
  assert.equal(series.points, [
    { start: at('2026-03-08T00:00:00Z'), peak: 50, average: 25 },
    { start: at('2026-03-09T00:00:00Z'), peak: 30, average: 10 },
    { start: at('2026-03-10T00:00:00Z'), peak: null, average: null },
  ]);
});
folding('2 days is still hourly (48 points), 365 days is daily', () => {
  assert.is(aggregate([], { days: 2, now: 0 }).points.length, 48);
  assert.is(aggregate([], { days: 365, now: 0 }).points.length, 365);
});
folding.run();

const store = suite('sampleStore');
store('folds samples into hourly max, sum and count; keeps 365 days, dropping the day that leaves', async () => {
  const samples = sampleStore(createMemoryStorage());
  const id = '7f000000-0000-4000-8000-000000000001';
  await samples.add(id, [
    { at: at('2025-01-01T10:05:00Z'), players: 3 },
    { at: at('2025-01-01T10:55:00Z'), players: 9 },
    { at: at('2025-01-01T11:00:00Z'), players: 4 },
  ]);
  assert.equal(await samples.range(id, at('2025-01-01T00:00:00Z'), at('2025-01-01T23:00:00Z')), [
    { hour: at('2025-01-01T10:00:00Z'), max: 9, sum: 12, count: 2 },
    { hour: at('2025-01-01T11:00:00Z'), max: 4, sum: 4, count: 1 },
  ]);
  await Promise.all(
    Array.from({ length: 50 }, (_, i) => samples.add(id, [{ at: at('2025-01-01T12:00:00Z'), players: i }])),
  );
  assert.equal(
    (await samples.range(id, at('2025-01-01T12:00:00Z'), at('2025-01-01T12:00:00Z')))[2],
    { hour: at('2025-01-01T12:00:00Z'), max: 49, sum: 1225, count: 50 },
    'concurrent adds lose nothing',
  );
  await samples.add(id, [{ at: at('2025-01-01T00:00:00Z') + 366 * 86_400_000, players: 1 }]);
  assert.equal(
    await samples.range(id, at('2025-01-01T00:00:00Z'), at('2025-01-01T23:00:00Z')),
    [],
    'the day 366 days back is gone',
  );
});
store.run();

function sampleSeries(): Series {
  const buckets: HourBucket[] = [];
  for (let day = 0; day < 7; day++) {
    if (day === 3) continue; // a gap
    buckets.push({ hour: at('2026-03-01T00:00:00Z') + day * 24 * H + 15 * H, max: 40 + day * 5, sum: 300, count: 10 });
  }
  return aggregate(buckets, { days: 7, now: at('2026-03-07T20:00:00Z') });
}

const drawing = suite('drawPlayerChart');
for (const theme of ['light', 'dark'] as const) {
  drawing(
    `${theme}: size, background, two coloured lines with gradients, one marker per point, labels, legend, title and desc`,
    () => {
      const series = sampleSeries();
      const svg = parseSvg(drawPlayerChart(series, { width: 640, height: 300, theme }));
      const colours = THEMES[theme];
      assert.is(svg.getAttribute('width'), '640');
      assert.is(svg.getAttribute('height'), '300');
      assert.is(svg.getAttribute('viewBox'), '0 0 640 300');
      assert.is(svg.getAttribute('role'), 'img');
      assert.is(byClass(svg, 'rect', 'background')[0]!.getAttribute('fill'), theme === 'dark' ? '#1a1a1a' : '#ffffff');
      for (const key of ['peak', 'average'] as const) {
        const lines = byClass(svg, 'path', `line-${key}`);
        assert.is(lines.length, 2, 'the gap splits the line in two');
        assert.ok(lines.every((l) => l.getAttribute('stroke') === colours[key]));
        assert.is(byClass(svg, 'circle', `marker-${key}`).length, 6);
        const fill = byClass(svg, 'path', `area-${key}`)[0]!.getAttribute('fill')!;
        const gradientId = /^url\(#(.+)\)$/.exec(fill)![1]!;
        assert.ok(all(svg, 'linearGradient').some((g) => g.getAttribute('id') === gradientId));
      }
      assert.is(all(svg, 'linearGradient').length, 2);
      assert.equal(
        all(svg, 'text')
          .filter((t) => t.parentNode && (t.parentNode as Element).getAttribute?.('class') === 'legend-item')
          .map((t) => t.textContent),
        ['Peak Players', 'Average Players'],
      );
      assert.equal(
        byClass(svg, 'text', 'y-label').map((t) => t.textContent),
        ['0', '20', '40', '60', '80'],
      );
      assert.ok(byClass(svg, 'text', 'x-label').length >= 4);
      assert.ok(byClass(svg, 'line', 'grid').every((l) => l.getAttribute('stroke') === colours.grid));
      assert.is(all(svg, 'title')[0]!.textContent, 'Players over the last 7 days');
      assert.is(all(svg, 'desc')[0]!.textContent, 'Over the last 7 days: peak 70 players, average 30.0 players.');
    },
  );
}
drawing('X labels never overlap, at any width and period', () => {
  for (const days of [1, 2, 7, 90, 365]) {
    for (const width of [200, 333, 800, 2000]) {
      const svg = parseSvg(
        drawPlayerChart(aggregate([], { days, now: at('2026-03-07T20:00:00Z') }), {
          width,
          height: 200,
          theme: 'light',
        }),
      );
      const labels = byClass(svg, 'text', 'x-label').map((t) => ({
        x: Number(t.getAttribute('x')),
        width: t.textContent!.length * 6.6,
      }));
      assert.ok(labels.length >= 1, `${days} days at ${width}px`);
      for (let i = 1; i < labels.length; i++) {
        const gap = labels[i]!.x - labels[i - 1]!.x;
        assert.ok(
          gap >= (labels[i]!.width + labels[i - 1]!.width) / 2,
          `${days} days at ${width}px: labels ${i - 1} and ${i} overlap`,
        );
      }
    }
  }
});
drawing('no data: a valid chart with axes and "No data yet", no lines or markers', () => {
  const svg = parseSvg(
    drawPlayerChart(aggregate([], { days: 7, now: 0 }), { width: 400, height: 300, theme: 'light' }),
  );
  assert.is(byClass(svg, 'text', 'no-data')[0]!.textContent, 'No data yet');
  assert.is(all(svg, 'circle').length, 0);
  assert.is(byClass(svg, 'path', 'line-peak').length, 0);
  assert.ok(byClass(svg, 'line', 'grid').length >= 2);
  assert.match(all(svg, 'desc')[0]!.textContent!, /^No data yet/);
});
drawing('same input, same bytes; different charts, different ids', () => {
  const series = sampleSeries();
  const a = drawPlayerChart(series, { width: 640, height: 300, theme: 'light' });
  assert.is(drawPlayerChart(series, { width: 640, height: 300, theme: 'light' }), a);
  const ids = (svg: string) => all(parseSvg(svg), 'linearGradient').map((g) => g.getAttribute('id'));
  const b = drawPlayerChart(series, { width: 640, height: 300, theme: 'dark' });
  assert.not.equal(ids(a), ids(b));
});
drawing.run();

const ctx = {} as { workspace: Workspace; origin: RunningOrigin };
const example = suite('GET /api/charts/example');
example.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await startTestOrigin(ctx.workspace);
});
example.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});
example('an SVG of the requested size, deterministic, cacheable for 5 minutes, 304 on its ETag', async () => {
  const path = `${ctx.origin.url}/api/charts/example?days=30&width=900&height=420&theme=dark`;
  const first = await fetch(path);
  assert.is(first.status, 200);
  assert.is(first.headers.get('content-type'), 'image/svg+xml');
  assert.is(first.headers.get('cache-control'), 'public, max-age=300');
  const svg = parseSvg(await first.text());
  assert.is(svg.getAttribute('width'), '900');
  assert.is(byClass(svg, 'circle', 'marker-peak').length, 30);
  const again = await fetch(path, { headers: { 'if-none-match': first.headers.get('etag')! } });
  assert.is(again.status, 304);
  const defaults = parseSvg(await (await fetch(`${ctx.origin.url}/api/charts/example`)).text());
  assert.is(defaults.getAttribute('width'), '800');
  assert.is(defaults.getAttribute('height'), '400');
  assert.is(byClass(defaults, 'circle', 'marker-average').length, 7);
});
example('format=png: the same chart rasterised', async () => {
  const response = await fetch(`${ctx.origin.url}/api/charts/example?format=png&width=500&height=250`);
  assert.is(response.headers.get('content-type'), 'image/png');
  const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
  assert.equal([meta.format, meta.width, meta.height], ['png', 500, 250]);
});
const invalid: [string, RegExp][] = [
  ['days=0', /^days must be an integer from 1 to 365$/],
  ['days=366', /^days must be an integer from 1 to 365$/],
  ['days=1.5', /^days must be an integer from 1 to 365$/],
  ['width=199', /^width must be an integer from 200 to 2000$/],
  ['height=2001', /^height must be an integer from 200 to 2000$/],
  ['theme=blue', /^theme must be light, dark or auto$/],
  ['background=none', /^background must be solid or transparent$/],
  ['format=jpg', /^format must be svg, png, json or csv$/],
];
for (const [query, message] of invalid) {
  example(`400 for ${query}`, async () => {
    const response = await fetch(`${ctx.origin.url}/api/charts/example?${query}`);
    assert.is(response.status, 400);
    assert.match(((await response.json()) as { error: string }).error, message);
  });
}
example.run();
