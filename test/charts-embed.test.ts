import type { Element } from '@xmldom/xmldom';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { all, byClass, parseSvg } from './svg.ts';
import { aggregate, type HourBucket, type Series } from '../server/charts/aggregate.ts';
import type { ChartData } from '../server/charts/data.ts';
import { drawPlayerChart } from '../server/charts/draw.ts';
import { EXAMPLE_NOW, exampleBuckets } from '../server/charts/example.ts';
import { ChartQuery } from '../server/charts/schema.ts';
import { signChartUrl } from '../server/charts/signed-url.ts';
import { THEMES } from '../server/charts/themes.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { createFileStorage } from '../server/storage.ts';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { checkAnswer } from './openapi-conformance.ts';
import {
  CHROMIUM_ARGS,
  ROOT,
  findProgram,
  makeAccounts,
  makeWorkspace,
  runDepot,
  startRedis,
  startTestOrigin,
  workspaceEnv,
  type Accounts,
  type CliResult,
  type RedisServer,
  type Workspace,
} from './helpers.ts';

// Issue 17 item 3: charts beyond SPEC 4.9 (theme=auto, transparent backgrounds, the record peak,
// flat and single-point series, the series as data, signed embeddable URLs).

const H = 3_600_000;
const at = (iso: string) => Date.parse(iso);

const everyElement = (root: Element) => all(root, '*');

/** A week of daily peaks 40..70 with day 3 missing. */
function weekSeries(): Series {
  const buckets: HourBucket[] = [];
  for (let day = 0; day < 7; day++) {
    if (day === 3) continue;
    buckets.push({ hour: at('2026-03-01T00:00:00Z') + day * 24 * H + 15 * H, max: 40 + day * 5, sum: 300, count: 10 });
  }
  return aggregate(buckets, { days: 7, now: at('2026-03-07T20:00:00Z') });
}

/**
 * The rules of `@media (prefers-color-scheme: dark)` in the chart's <style>, by class:
 * `{ grid: { stroke: '#3f3f46' }, ... }`. Every selector is scoped to the chart's own id.
 */
function darkRules(svg: Element): Record<string, Record<string, string>> {
  const styles = all(svg, 'style');
  assert.is(styles.length, 1, 'one <style>');
  const css = styles[0]!.textContent!;
  const media = /^@media \(prefers-color-scheme: dark\)\{(.*)\}$/.exec(css);
  assert.ok(media, `a prefers-color-scheme: dark block: ${css}`);
  const id = svg.getAttribute('id');
  assert.ok(id, 'the root carries the id the rules are scoped to');
  const rules: Record<string, Record<string, string>> = {};
  for (const [, selectors, property, value] of media[1]!.matchAll(/([^{}]+)\{([\w-]+):([^;}]+)\}/g)) {
    for (const selector of selectors!.split(',')) {
      const match = new RegExp(`^#${id} \\.([\\w-]+)$`).exec(selector);
      assert.ok(match, `scoped selector: ${selector}`);
      (rules[match[1]!] ??= {})[property!] = value!;
    }
  }
  return rules;
}

const PAINTS = ['fill', 'stroke', 'stop-color'] as const;
const paletteKey = (theme: 'light' | 'dark', colour: string | null) =>
  (Object.keys(THEMES[theme]) as (keyof typeof THEMES.light)[]).find((key) => THEMES[theme][key] === colour);

const themes = suite('theme=auto and background=transparent');
themes('auto: light palette in the attributes, every painted element turns dark under prefers-color-scheme', () => {
  const svg = parseSvg(drawPlayerChart(weekSeries(), { width: 640, height: 300, theme: 'auto' }));
  const rules = darkRules(svg);
  assert.is(byClass(svg, 'rect', 'background')[0]!.getAttribute('fill'), THEMES.light.background);
  let painted = 0;
  for (const element of everyElement(svg)) {
    for (const paint of PAINTS) {
      const key = paletteKey('light', element.getAttribute(paint));
      if (!key) continue;
      painted++;
      const cls = element.getAttribute('class');
      assert.ok(
        cls,
        `<${element.tagName} ${paint}="${element.getAttribute(paint)}"> has a class the dark rules can reach`,
      );
      assert.is(rules[cls]?.[paint], THEMES.dark[key], `.${cls} ${paint} in dark`);
    }
  }
  assert.ok(painted > 40, `${painted} painted elements`);
  // Both palettes whole: every colour of each theme appears.
  const text = drawPlayerChart(weekSeries(), { width: 640, height: 300, theme: 'auto' });
  for (const theme of ['light', 'dark'] as const)
    for (const colour of Object.values(THEMES[theme])) assert.ok(text.includes(colour), `${theme} ${colour}`);
});
themes('transparent: no background rectangle with any theme; the rest of the palette unchanged', () => {
  for (const theme of ['light', 'dark', 'auto'] as const) {
    const text = drawPlayerChart(weekSeries(), { width: 640, height: 300, theme, background: 'transparent' });
    const svg = parseSvg(text);
    assert.is(byClass(svg, 'rect', 'background').length, 0, theme);
    assert.is(all(svg, 'rect').length, 0, theme);
    const palette = THEMES[theme === 'auto' ? 'light' : theme];
    assert.ok(byClass(svg, 'path', 'line-peak').every((l) => l.getAttribute('stroke') === palette.peak));
    if (theme === 'auto') {
      const rules = darkRules(svg);
      assert.is(rules.background, undefined, 'no dark background either');
      assert.is(rules['line-peak']!.stroke, THEMES.dark.peak);
    } else assert.is(all(svg, 'style').length, 0, `${theme}: no style needed`);
  }
});
themes('two auto charts inline on one page style only themselves', () => {
  const a = parseSvg(drawPlayerChart(weekSeries(), { width: 640, height: 300, theme: 'auto' }));
  const b = parseSvg(drawPlayerChart(weekSeries(), { width: 700, height: 300, theme: 'auto' }));
  assert.is.not(a.getAttribute('id'), b.getAttribute('id'));
});
themes.run();

/**
 * What the SVG draws, read back from its markers: the value of each point at the index its x gives,
 * by the grid's own scale (the line at 0 and the top line with its label). Undefined: no marker.
 */
function drawnSeries(svgText: string, count: number) {
  const svg = parseSvg(svgText);
  const grid = byClass(svg, 'line', 'grid');
  const labels = byClass(svg, 'text', 'y-label').map((t) => Number(t.textContent!.replace(/,/g, '')));
  const [bottom, top] = [grid[0]!, grid.at(-1)!];
  const [left, right] = [Number(bottom.getAttribute('x1')), Number(bottom.getAttribute('x2'))];
  const [y0, yTop] = [Number(bottom.getAttribute('y1')), Number(top.getAttribute('y1'))];
  const yMax = labels.at(-1)!;
  const drawn = { peak: new Array<number | undefined>(count), average: new Array<number | undefined>(count) };
  for (const key of ['peak', 'average'] as const) {
    for (const marker of byClass(svg, 'circle', `marker-${key}`)) {
      const index = Math.round(((Number(marker.getAttribute('cx')) - left) * (count - 1)) / (right - left));
      drawn[key][index] = ((y0 - Number(marker.getAttribute('cy'))) / (y0 - yTop)) * yMax;
    }
  }
  // 0.05 px of rounding in each coordinate, in players.
  return { ...drawn, tolerance: (0.1 / (y0 - yTop)) * yMax + 0.005 };
}

function assertDrawnAsData(svgText: string, data: ChartData, what: string) {
  const drawn = drawnSeries(svgText, data.points.length);
  data.points.forEach((point, i) => {
    for (const key of ['peak', 'average'] as const) {
      const value = point[key];
      if (value === null) assert.is(drawn[key][i], undefined, `${what}: ${key} ${i} is a gap in both`);
      else {
        assert.ok(drawn[key][i] !== undefined, `${what}: ${key} ${i} drawn`);
        assert.ok(
          Math.abs(drawn[key][i]! - value) <= drawn.tolerance,
          `${what}: ${key} ${i}: drawn ${drawn[key][i]}, data ${value}`,
        );
      }
    }
  });
}

/** RFC 4180 rows of our CSV (no quoting needed: times and numbers), back into the JSON's points. */
function csvPoints(csv: string): ChartData['points'] {
  const [header, ...rows] = csv.split('\r\n');
  assert.is(header, 'time,peak,average');
  assert.is(rows.pop(), '', 'the last row ends with CRLF');
  return rows.map((row) => {
    const [time, peak, average] = row.split(',');
    return { time: time!, peak: peak === '' ? null : Number(peak), average: average === '' ? null : Number(average) };
  });
}

/** Every number in the SVG's coordinates and sizes is finite: no NaN or Infinity reached the drawing. */
function assertFiniteGeometry(text: string, what: string) {
  assert.not.match(text, /NaN|Infinity/, what);
  const svg = parseSvg(text);
  for (const element of everyElement(svg))
    for (const name of ['x', 'y', 'x1', 'x2', 'y1', 'y2', 'cx', 'cy', 'r', 'd']) {
      const value = element.getAttribute(name);
      if (value === null) continue;
      for (const n of value.match(/-?[\d.]+/g) ?? [])
        assert.ok(Number.isFinite(Number(n)), `${what}: ${name}=${value}`);
    }
}
const numbersOf = (d: string) => (d.match(/-?[\d.]+/g) ?? []).map(Number);

const shapes = suite('record peak, flat and single-point series');
shapes('the record peak is ringed and labelled with its count and time, inside the chart', () => {
  const width = 640;
  const svg = parseSvg(drawPlayerChart(weekSeries(), { width, height: 300, theme: 'light' }));
  const records = byClass(svg, 'g', 'record');
  assert.is(records.length, 1);
  const label = byClass(svg, 'text', 'record-label')[0]!;
  assert.is(label.textContent, 'Record 70 · Mar 7');
  const ring = byClass(svg, 'circle', 'record-marker')[0]!;
  const highest = byClass(svg, 'circle', 'marker-peak').sort(
    (a, b) => Number(a.getAttribute('cy')) - Number(b.getAttribute('cy')),
  )[0]!;
  assert.equal(
    [ring.getAttribute('cx'), ring.getAttribute('cy')],
    [highest.getAttribute('cx'), highest.getAttribute('cy')],
  );
  assert.is(label.getAttribute('text-anchor'), 'end', 'the last point: the label ends at it, inside the chart');
  assert.ok(Number(label.getAttribute('y')) < Number(ring.getAttribute('cy')), 'above its point');
  // Hourly charts give the hour.
  const hourly = aggregate([{ hour: at('2026-03-10T10:00:00Z'), max: 9, sum: 12, count: 3 }], {
    days: 1,
    now: at('2026-03-10T12:59:00Z'),
  });
  const text = drawPlayerChart(hourly, { width, height: 300, theme: 'dark' });
  assert.is(byClass(parseSvg(text), 'text', 'record-label')[0]!.textContent, 'Record 9 · Mar 10 10:00');
  // No data, no record.
  assert.is(
    byClass(
      parseSvg(drawPlayerChart(aggregate([], { days: 7, now: 0 }), { width, height: 300, theme: 'light' })),
      'g',
      'record',
    ).length,
    0,
  );
});
shapes('a flat series (min = max, zero or not) draws a visible horizontal line inside the plot', () => {
  for (const players of [0, 25, 1_000_000]) {
    const buckets = Array.from({ length: 7 }, (_, day) => ({
      hour: at('2026-03-01T12:00:00Z') + day * 24 * H,
      max: players,
      sum: players * 2,
      count: 2,
    }));
    const text = drawPlayerChart(aggregate(buckets, { days: 7, now: at('2026-03-07T20:00:00Z') }), {
      width: 640,
      height: 300,
      theme: 'light',
    });
    assertFiniteGeometry(text, `flat at ${players}`);
    const svg = parseSvg(text);
    const grid = byClass(svg, 'line', 'grid');
    const [bottom, top] = [Number(grid[0]!.getAttribute('y1')), Number(grid.at(-1)!.getAttribute('y1'))];
    assert.ok(top < bottom, `${players}: the scale has height`);
    for (const key of ['peak', 'average']) {
      const lines = byClass(svg, 'path', `line-${key}`);
      assert.is(lines.length, 1);
      const coordinates = numbersOf(lines[0]!.getAttribute('d')!);
      const xs = coordinates.filter((_, i) => i % 2 === 0);
      const ys = coordinates.filter((_, i) => i % 2 === 1);
      assert.is(new Set(ys).size, 1, `${players} ${key}: horizontal`);
      assert.ok(Math.max(...xs) - Math.min(...xs) > 500, `${players} ${key}: spans the plot`);
      assert.ok(ys[0]! >= top && ys[0]! <= bottom, `${players} ${key}: inside the plot`);
      assert.is(byClass(svg, 'circle', `marker-${key}`).length, 7);
    }
  }
});
shapes('a single point draws a visible marker at the middle; one point among gaps is as visible', () => {
  const one: Series = { period: 'day', days: 1, points: [{ start: at('2026-03-01T00:00:00Z'), peak: 5, average: 5 }] };
  const text = drawPlayerChart(one, { width: 400, height: 300, theme: 'light' });
  assertFiniteGeometry(text, 'one point');
  const svg = parseSvg(text);
  for (const key of ['peak', 'average']) {
    const [marker] = byClass(svg, 'circle', `marker-${key}`);
    assert.ok(marker, key);
    assert.ok(Number(marker.getAttribute('r')) >= 3, `${key}: visible`);
    assert.is(Number(marker.getAttribute('cx')), 56 + (400 - 80) / 2, `${key}: in the middle of the plot`);
  }
  assert.is(byClass(svg, 'text', 'record-label')[0]!.textContent, 'Record 5 · Mar 1');
  // One sample in a year: 365 points, markers normally 1.2 px; the lone one is not.
  const year = aggregate([{ hour: at('2026-02-01T10:00:00Z'), max: 3, sum: 3, count: 1 }], {
    days: 365,
    now: at('2026-03-07T20:00:00Z'),
  });
  const lone = drawPlayerChart(year, { width: 800, height: 400, theme: 'auto' });
  assertFiniteGeometry(lone, 'one point in a year');
  assert.ok(Number(byClass(parseSvg(lone), 'circle', 'marker-peak')[0]!.getAttribute('r')) >= 3);
});
shapes.run();

const ctx = {} as { workspace: Workspace; origin: RunningOrigin; accounts: Accounts };
const http = suite('charts over HTTP');
http.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.accounts = await makeAccounts(ctx.workspace);
  ctx.origin = await startTestOrigin(ctx.workspace, { storage: createFileStorage(ctx.workspace.storageDir) });
});
http.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});
http('theme=auto and background=transparent answer SVGs; PNG rasterises them', async () => {
  for (const query of ['theme=auto', 'theme=auto&background=transparent', 'theme=dark&background=transparent']) {
    const response = await fetch(`${ctx.origin.url}/api/charts/example?${query}`);
    assert.is(response.status, 200, query);
    assert.is(response.headers.get('content-type'), 'image/svg+xml');
    const svg = parseSvg(await response.text());
    assert.is(byClass(svg, 'rect', 'background').length, query.includes('transparent') ? 0 : 1, query);
    assert.is(all(svg, 'style').length, query.includes('auto') ? 1 : 0, query);
  }
  const png = await fetch(`${ctx.origin.url}/api/charts/example?theme=auto&background=transparent&format=png`);
  assert.is(png.headers.get('content-type'), 'image/png');
});
const CHROMIUM = findProgram('chromium');
if (!CHROMIUM) console.warn('charts-embed.test.ts: chromium not installed, theme=auto not checked in a browser');
else
  http('theme=auto in a browser: light by default, dark when the viewer prefers dark', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      for (const colorScheme of ['light', 'dark'] as const) {
        const page = await browser.newPage({ colorScheme });
        await page.goto(`${ctx.origin.url}/api/charts/example?theme=auto`);
        // A string: tsx would wrap a named function in a helper the page does not have.
        const painted = await page.evaluate(`({
          background: getComputedStyle(document.querySelector('.background')).fill,
          peak: getComputedStyle(document.querySelector('.line-peak')).stroke,
          label: getComputedStyle(document.querySelector('.y-label')).fill,
        })`);
        const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;
        const palette = THEMES[colorScheme];
        assert.equal(
          painted,
          { background: rgb(palette.background), peak: rgb(palette.peak), label: rgb(palette.muted) },
          colorScheme,
        );
        await page.close();
      }
    } finally {
      await browser.close();
    }
  });

for (const [query, message] of [
  ['theme=system', 'theme must be light, dark or auto'],
  ['background=none', 'background must be solid or transparent'],
]) {
  http(`400 for ${query}, naming the parameter and its values`, async () => {
    const response = await fetch(`${ctx.origin.url}/api/charts/example?${query}`);
    assert.is(response.status, 400);
    assert.equal(await response.json(), { error: message });
  });
}

http('format=json and format=csv: the series the example chart draws, gaps as null and empty', async () => {
  for (const days of [1, 7, 90]) {
    const base = `${ctx.origin.url}/api/charts/example?days=${days}&width=1000`;
    const get = (format: string) => fetch(`${base}&format=${format}`);
    const [svg, json, csv] = await Promise.all([get('svg'), get('json'), get('csv')]);
    assert.is(json.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.match(csv.headers.get('content-type')!, /^text\/csv; charset=utf-8/);
    if (days === 90)
      assert.match(csv.headers.get('content-encoding') ?? '', /^(?:br|gzip)$/, 'a long CSV is compressed');
    for (const answer of [json, csv]) assert.is(answer.headers.get('cache-control'), 'public, max-age=300');
    const data = (await json.json()) as ChartData;
    const series = aggregate(exampleBuckets(days, EXAMPLE_NOW), { days, now: EXAMPLE_NOW });
    assert.equal(data, {
      period: series.period,
      days,
      points: series.points.map((p) => ({
        time: new Date(p.start).toISOString(),
        peak: p.peak,
        average: p.average === null ? null : Math.round(p.average * 100) / 100,
      })),
    });
    assert.equal(csvPoints(await csv.text()), data.points, `${days} days: csv = json`);
    assertDrawnAsData(await svg.text(), data, `example, ${days} days`);
  }
});

http('a server chart as data: same access rules and cache, equal to the SVG; gaps where no samples came', async () => {
  const { publicServer, privateServer, owner, other } = ctx.accounts;
  const now = Date.now();
  const hour = Math.floor(now / H) * H;
  const samples = [1, 2, 5, 6, 7, 30].flatMap((hoursAgo, i) => [
    { at: new Date(hour - hoursAgo * H + 60_000).toISOString(), players: 10 + i * 3 },
    { at: new Date(hour - hoursAgo * H + 120_000).toISOString(), players: 4 + i },
  ]);
  for (const server of [publicServer, privateServer]) {
    const stored = await fetch(`${ctx.origin.url}/api/servers/${server.id}/stats`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.ingestKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ samples }),
    });
    assert.is(stored.status, 204);
  }
  for (const [server, headers, cacheControl] of [
    [publicServer, {}, 'public, max-age=300'],
    [privateServer, { authorization: `Bearer ${owner}` }, 'private, max-age=300'],
  ] as const) {
    const base = `${ctx.origin.url}/api/servers/${server.id}/chart/players?days=2`;
    const get = (format: string) => fetch(`${base}&format=${format}`, { headers });
    const [svg, json, csv] = await Promise.all([get('svg'), get('json'), get('csv')]);
    for (const answer of [svg, json, csv]) {
      assert.is(answer.status, 200);
      assert.is(answer.headers.get('cache-control'), cacheControl);
    }
    const data = (await json.json()) as ChartData;
    assert.is(data.points.length, 48);
    assert.is(data.points.filter((p) => p.peak !== null).length, 6);
    assert.equal(data.points.at(-2), { time: new Date(hour - H).toISOString(), peak: 10, average: 7 });
    assert.equal(data.points.at(-1), { time: new Date(hour).toISOString(), peak: null, average: null });
    assert.equal(csvPoints(await csv.text()), data.points);
    assertDrawnAsData(await svg.text(), data, server === publicServer ? 'public' : 'private');
  }
  for (const format of ['json', 'csv']) {
    const path = `${ctx.origin.url}/api/servers/${privateServer.id}/chart/players?format=${format}`;
    assert.is((await fetch(path)).status, 403, `${format} without a token`);
    assert.is((await fetch(path, { headers: { authorization: `Bearer ${other}` } })).status, 403, 'another user');
  }
});

http('chart errors are JSON and never kept longer than a minute', async () => {
  const { privateServer } = ctx.accounts;
  const cases: [string, number][] = [
    ['/api/charts/example?days=0&format=png', 400],
    ['/api/charts/example?theme=neon', 400],
    [`/api/servers/${privateServer.id}/chart/players?format=png`, 403],
    [`/api/servers/${privateServer.id}/chart/players?format=json`, 403],
    ['/api/servers/00000000-0000-4000-8000-000000000000/chart/players?format=svg', 404],
    ['/api/servers/not-a-uuid/chart/players', 400],
  ];
  for (const [path, status] of cases) {
    const response = await fetch(ctx.origin.url + path);
    assert.is(response.status, status, path);
    assert.is(response.headers.get('content-type'), 'application/json; charset=utf-8', path);
    assert.type(((await response.json()) as { error: string }).error, 'string');
    const cacheControl = response.headers.get('cache-control');
    const maxAge = /max-age=(\d+)/.exec(cacheControl ?? '');
    assert.ok(
      cacheControl === null || /no-store/.test(cacheControl) || (maxAge && Number(maxAge[1]) <= 60),
      `${path}: Cache-Control ${cacheControl}`,
    );
  }
});

// Signed chart URLs: an origin that knows the keys (the newest signs, the older one is still
// accepted), its clock movable to see a URL expire.
const NEW_KEY = 'new-key-0123456789abcdefghijklmnopqrstuvwxyz';
const OLD_KEY = 'old-key-0123456789abcdefghijklmnopqrstuvwxyz';
const signing = {} as { origin: RunningOrigin; fenced: RunningOrigin; clockOffset: number };
const startSigning = (privateChartIps: string[] = []) =>
  startTestOrigin(ctx.workspace, {
    storage: createFileStorage(ctx.workspace.storageDir),
    chartUrlKeys: [NEW_KEY, OLD_KEY],
    privateChartIps,
    now: () => Date.now() + signing.clockOffset,
  });
const mint = (id: string, body: unknown, token: string | null = ctx.accounts.owner, origin = signing.origin) =>
  fetch(`${origin.url}/api/servers/${id}/chart-urls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
/** A minted URL's path and query, to request from a test origin (minted URLs name PUBLIC_URL). */
const pathOf = (url: string) => {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
};
async function mintedPath(body: unknown = { days: 7 }): Promise<string> {
  const response = await mint(ctx.accounts.privateServer.id, body);
  assert.is(response.status, 200, await response.clone().text());
  return pathOf(((await response.json()) as { url: string }).url);
}
/** The same URL with one query parameter set (or removed with null). */
function withParam(path: string, name: string, value: string | null): string {
  const url = new URL(path, 'http://x');
  if (value === null) url.searchParams.delete(name);
  else url.searchParams.set(name, value);
  return url.pathname + url.search;
}
async function assertForbidden(path: string, message: RegExp, origin = signing.origin) {
  const response = await fetch(origin.url + path);
  assert.is(response.status, 403, path);
  assert.is(response.headers.get('cache-control'), 'private, no-store');
  assert.match(((await response.json()) as { error: string }).error, message);
}

http('signed URL: the owner mints it; it answers without a token, privately, in its format', async () => {
  signing.clockOffset = 0;
  signing.origin = await startSigning();
  const minted = await mint(ctx.accounts.privateServer.id, { days: 2, theme: 'auto', expires: '12h' });
  assert.is(minted.status, 200);
  await checkAnswer(
    'POST',
    `${signing.origin.url}/api/servers/${ctx.accounts.privateServer.id}/chart-urls`,
    minted.clone(),
  );
  assert.is(minted.headers.get('cache-control'), 'no-store');
  assert.is(minted.headers.get('access-control-allow-origin'), null);
  const { url, expires } = (await minted.json()) as { url: string; expires: string };
  const parsed = new URL(url);
  assert.is(parsed.origin, 'http://localhost:3000', 'under PUBLIC_URL');
  assert.is(parsed.pathname, `/api/servers/${ctx.accounts.privateServer.id}/chart/players`);
  assert.equal([...parsed.searchParams.keys()], ['days', 'theme', 'exp', 'sig']);
  const exp = Number(parsed.searchParams.get('exp'));
  assert.ok(Math.abs(exp * 1000 - (Date.now() + 12 * H)) < 60_000, 'exp: 12 hours from now');
  assert.is(expires, new Date(exp * 1000).toISOString());
  const chart = await fetch(signing.origin.url + pathOf(url));
  assert.is(chart.status, 200);
  assert.is(chart.headers.get('content-type'), 'image/svg+xml');
  assert.is(chart.headers.get('cache-control'), 'private, max-age=300');
  assert.is(chart.headers.get('access-control-allow-origin'), null);
  assert.is(all(parseSvg(await chart.text()), 'style').length, 1, 'theme=auto as signed');
  // The same chart with a default named: the canonical parameters are the same, so is the signature.
  assert.is((await fetch(signing.origin.url + withParam(pathOf(url), 'width', '800'))).status, 200);
  // Data formats sign too.
  const data = await fetch(signing.origin.url + (await mintedPath({ days: 2, format: 'json' })));
  assert.is(data.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.is(((await data.json()) as ChartData).points.length, 48);
});
http('signed URL: expired, tampered, another server, forged or unkeyed signatures answer 403', async () => {
  const path = await mintedPath({ days: 7, expires: '1m' });
  const valid = await fetch(signing.origin.url + path);
  assert.is(valid.status, 200);
  // Kept by the browser no longer than the URL is valid (5 minutes for longer ones).
  const maxAge = Number(/^private, max-age=(\d+)$/.exec(valid.headers.get('cache-control')!)?.[1]);
  assert.ok(maxAge > 0 && maxAge <= 60, `max-age ${maxAge} within the URL's minute`);
  const { privateServer, publicServer } = ctx.accounts;
  const tampered: [string, string | null][] = [
    ['days', '8'],
    ['theme', 'dark'],
    ['format', 'png'],
    ['background', 'transparent'],
    ['exp', String(Number(new URL(path, 'http://x').searchParams.get('exp')) + 3600)],
  ];
  for (const [name, value] of tampered)
    await assertForbidden(withParam(path, name, value), /^sig does not sign this chart with these parameters/);
  await assertForbidden(path.replace(privateServer.id, publicServer.id), /^sig does not sign this chart/);
  await assertForbidden(withParam(path, 'sig', 'A'.repeat(43)), /^sig does not sign this chart/);
  // Signed by a key the origin no longer has (removed in a rotation).
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const removed = signChartUrl({
    baseUrl: 'http://x',
    keys: ['removed-key-0123456789abcdefghijklmnopqrstuvwxyz'],
    serverId: privateServer.id,
    given: { days: '7' },
    query: ChartQuery.parse({ days: '7' }),
    exp,
  });
  await assertForbidden(pathOf(removed), /^sig does not sign this chart/);
  const byOldKey = signChartUrl({
    baseUrl: 'http://x',
    keys: [OLD_KEY],
    serverId: privateServer.id,
    given: { days: '7' },
    query: ChartQuery.parse({ days: '7' }),
    exp,
  });
  assert.is((await fetch(signing.origin.url + pathOf(byOldKey))).status, 200, 'an older key is still accepted');
  // Malformed, or half a signature: 400 naming the parameter.
  for (const [bad, message] of [
    [withParam(path, 'sig', 'short'), 'sig must be 43 base64url characters'],
    [withParam(path, 'exp', 'soon'), 'exp must be a Unix time in seconds'],
    [withParam(path, 'sig', null), 'sig is missing: a signed chart URL carries both exp and sig'],
  ]) {
    const response = await fetch(signing.origin.url + bad);
    assert.is(response.status, 400, bad);
    assert.equal(await response.json(), { error: message });
  }
  // Two minutes later the 1-minute URL has expired.
  signing.clockOffset = 2 * 60_000;
  await assertForbidden(path, /^This chart URL expired at \d{4}-\d\d-\d\dT/);
  signing.clockOffset = 0;
});
http('signed URL: only the canonical spelling of sig verifies, not the 3 others of its last character', async () => {
  // 32 bytes are 43 base64url characters whose last carries 4 bits: its 2 spare bits spell the same bytes 4 ways.
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  for (let round = 0; round < 4; round++) {
    const path = await mintedPath({ days: 1 + round });
    const sig = new URL(path, 'http://x').searchParams.get('sig')!;
    const last = ALPHABET.indexOf(sig.at(-1)!);
    assert.is(last & 3, 0, 'a minted sig is canonical');
    assert.is((await fetch(signing.origin.url + path)).status, 200);
    for (const spare of [1, 2, 3]) {
      const other = sig.slice(0, -1) + ALPHABET[last | spare];
      assert.equal(Buffer.from(other, 'base64url'), Buffer.from(sig, 'base64url'), 'the same bytes');
      await assertForbidden(withParam(path, 'sig', other), /^sig does not sign this chart/);
    }
  }
});
http('signed URL: still only from PRIVATE_CHART_IPS when set', async () => {
  const path = await mintedPath();
  signing.fenced = await startSigning(['10.0.0.0/8']);
  try {
    await assertForbidden(path, /^Private charts cannot be read from this address$/, signing.fenced);
  } finally {
    await signing.fenced.close();
  }
  const inside = await startSigning(['127.0.0.0/8']);
  try {
    assert.is((await fetch(inside.url + path)).status, 200);
  } finally {
    await inside.close();
  }
});
http('minting: only the owner and a valid body; without CHART_URL_KEYS, the stored key', async () => {
  const { privateServer, other } = ctx.accounts;
  const expect = async (response: Response, status: number, error: string | RegExp) => {
    assert.is(response.status, status);
    assert.match(((await response.json()) as { error: string }).error, error);
  };
  await expect(await mint(privateServer.id, {}, null), 401, /^Send the server owner's token/);
  await expect(await mint(privateServer.id, {}, other), 403, /^Only the server's owner/);
  await expect(
    await mint('00000000-0000-4000-8000-000000000000', {}),
    404,
    /^No server with id 00000000-0000-4000-8000-000000000000$/,
  );
  await expect(await mint(privateServer.id, { days: 0 }), 400, /^days: must be an integer from 1 to 365$/);
  await expect(await mint(privateServer.id, { theme: 'neon' }), 400, /^theme: must be light, dark or auto$/);
  await expect(await mint(privateServer.id, { expires: '2y' }), 400, /^expires: must be a duration from 1m to 365d/);
  await expect(await mint(privateServer.id, { expires: '366d' }), 400, /^expires: must be a duration/);
  await expect(await mint(privateServer.id, { colour: 'red' }), 400, /Unrecognized key/);
  // The suite's first origin has no CHART_URL_KEYS: it signs with the key it keeps in STORAGE_DIR.
  const minted = await mint(privateServer.id, { days: 7 }, ctx.accounts.owner, ctx.origin);
  assert.is(minted.status, 200);
  const path = pathOf(((await minted.json()) as { url: string }).url);
  assert.is((await fetch(ctx.origin.url + path)).status, 200);
  assert.match(await readFile(join(ctx.workspace.storageDir, 'chart-url-key'), 'utf8'), /^[\w-]{43}$/);
  // Configured keys take precedence: the stored key's URLs are not accepted there, nor theirs here.
  await assertForbidden(path, /^sig does not sign/);
  await assertForbidden(await mintedPath(), /^sig does not sign/, ctx.origin);
});
/** `npm run --silent depot -- <args>`, as an operator types it, with the workspace's folders. */
function npmDepot(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      'npm',
      ['run', '--silent', 'depot', '--', ...args],
      { cwd: ROOT, env: workspaceEnv(ctx.workspace, env), timeout: 120_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

http('depot chart-url mints the same URLs from the command line, as operators type it', async () => {
  const { privateServer } = ctx.accounts;
  const env = { CHART_URL_KEYS: `${NEW_KEY}, ${OLD_KEY}`, PUBLIC_URL: 'https://depot.example' };
  const result = await npmDepot(
    ['chart-url', privateServer.id.toUpperCase(), '--days', '30', '--expires', '2h', '--format', 'csv'],
    env,
  );
  assert.is(result.code, 0, result.stderr);
  const printed = JSON.parse(result.stdout) as { serverId: string; url: string; expires: string };
  assert.is(printed.serverId, privateServer.id);
  assert.match(
    printed.url,
    new RegExp(
      `^https://depot\\.example/api/servers/${privateServer.id}/chart/players\\?days=30&format=csv&exp=\\d+&sig=[\\w-]{43}$`,
    ),
  );
  const csv = await fetch(signing.origin.url + pathOf(printed.url));
  assert.is(csv.status, 200);
  assert.is(csvPoints(await csv.text()).length, 30);
  signing.clockOffset = 3 * H;
  await assertForbidden(pathOf(printed.url), /expired/);
  signing.clockOffset = 0;
  for (const [args, message] of [
    [['chart-url', privateServer.id, '--days', '0'], '--days: must be an integer from 1 to 365'],
    [['chart-url', privateServer.id, '--expires', 'forever'], '--expires: must be a duration from 1m to 365d'],
    [['chart-url', 'nope'], 'serverId must be a UUID'],
    [['chart-url', '00000000-0000-4000-8000-000000000000'], 'no server with id'],
  ] as const) {
    const refused = await runDepot([...args], ctx.workspace, env);
    assert.is(refused.code, 1, args.join(' '));
    assert.ok(refused.stderr.includes(message), refused.stderr);
  }
  // Without CHART_URL_KEYS the CLI signs with the key kept in STORAGE_DIR, which the origin on it accepts.
  const keyless = await npmDepot(['chart-url', privateServer.id, '--days', '3'], {});
  assert.is(keyless.code, 0, keyless.stderr);
  const byStoredKey = pathOf((JSON.parse(keyless.stdout) as { url: string }).url);
  assert.is((await fetch(ctx.origin.url + byStoredKey)).status, 200);
  await assertForbidden(byStoredKey, /^sig does not sign/);
  const weak = await runDepot(['chart-url', privateServer.id], ctx.workspace, { CHART_URL_KEYS: 'short' });
  assert.is(weak.code, 1);
  assert.match(weak.stderr, /CHART_URL_KEYS.*at least 32 characters/);
  await signing.origin.close();
});

http.run();

// Without CHART_URL_KEYS, origins sharing one real redis-server keep one generated key between them.
const REDIS = findProgram('redis-server');
if (!REDIS) console.warn('charts-embed.test.ts: redis-server not installed, the shared-key test is not run');
else {
  const shared = {} as { workspace: Workspace; redis: RedisServer; origins: RunningOrigin[]; accounts: Accounts };
  const sharedKey = suite('signed URLs without CHART_URL_KEYS, two origins on one Redis');
  sharedKey.before(async () => {
    shared.workspace = await makeWorkspace();
    shared.redis = await startRedis(REDIS);
    shared.accounts = await makeAccounts(shared.workspace, { REDIS_URL: shared.redis.url });
    shared.origins = [
      await startTestOrigin(shared.workspace, { redisUrl: shared.redis.url }),
      await startTestOrigin(shared.workspace, { redisUrl: shared.redis.url }),
    ];
  });
  sharedKey.after(async () => {
    for (const origin of shared.origins ?? []) await origin.close();
    await shared.redis.stop();
    await shared.workspace.remove();
  });
  sharedKey("each origin accepts the other's URLs, and the CLI's", async () => {
    const { privateServer, owner } = shared.accounts;
    // Both mint at once: the key is set once, whoever comes first.
    const minted = await Promise.all(
      shared.origins.map((origin) => mint(privateServer.id, { days: 7 }, owner, origin)),
    );
    const paths = await Promise.all(
      minted.map(async (response) => {
        assert.is(response.status, 200);
        return pathOf(((await response.json()) as { url: string }).url);
      }),
    );
    const cli = await runDepot(['chart-url', privateServer.id, '--days', '2'], shared.workspace, {
      REDIS_URL: shared.redis.url,
    });
    assert.is(cli.code, 0, cli.stderr);
    paths.push(pathOf((JSON.parse(cli.stdout) as { url: string }).url));
    for (const origin of shared.origins)
      for (const path of paths) assert.is((await fetch(origin.url + path)).status, 200, `${origin.url}${path}`);
  });
  sharedKey.run();
}
