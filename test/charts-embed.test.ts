import { DOMParser, type Element } from '@xmldom/xmldom';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { aggregate, type HourBucket, type Series } from '../server/charts/aggregate.ts';
import { drawPlayerChart } from '../server/charts/draw.ts';
import { THEMES } from '../server/charts/themes.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

// Issue 17 item 3: charts beyond SPEC 4.9 (theme=auto, transparent backgrounds, the record peak,
// flat and single-point series, the series as data, signed embeddable URLs).

const H = 3_600_000;
const at = (iso: string) => Date.parse(iso);

function parse(svg: string): Element {
  const doc = new DOMParser({
    onError: (level, message) => {
      throw new Error(`${level}: ${message}`);
    },
  }).parseFromString(svg, 'image/svg+xml');
  return doc.documentElement as unknown as Element;
}
const all = (root: Element, tag: string) => Array.from(root.getElementsByTagName(tag));
const byClass = (root: Element, tag: string, cls: string) =>
  all(root, tag).filter((e) => e.getAttribute('class') === cls);
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
  const svg = parse(drawPlayerChart(weekSeries(), { width: 640, height: 300, theme: 'auto' }));
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
    const svg = parse(text);
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
  const a = parse(drawPlayerChart(weekSeries(), { width: 640, height: 300, theme: 'auto' }));
  const b = parse(drawPlayerChart(weekSeries(), { width: 700, height: 300, theme: 'auto' }));
  assert.is.not(a.getAttribute('id'), b.getAttribute('id'));
});
themes.run();

const ctx = {} as { workspace: Workspace; origin: RunningOrigin };
const http = suite('chart parameters over HTTP');
http.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await startTestOrigin(ctx.workspace);
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
    const svg = parse(await response.text());
    assert.is(byClass(svg, 'rect', 'background').length, query.includes('transparent') ? 0 : 1, query);
    assert.is(all(svg, 'style').length, query.includes('auto') ? 1 : 0, query);
  }
  const png = await fetch(`${ctx.origin.url}/api/charts/example?theme=auto&background=transparent&format=png`);
  assert.is(png.headers.get('content-type'), 'image/png');
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
http.run();
