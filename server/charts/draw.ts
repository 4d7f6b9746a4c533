import type { ChartPoint, Series } from './aggregate.ts';
import { THEMES } from './themes.ts';
import type { ChartQuery } from './schema.ts';
import { sha256Hex } from '../helpers/digest.ts';
import { escapeXml } from '../helpers/escape-xml.ts';

export type DrawOptions = {
  width: number;
  height: number;
  /** auto: light in the attributes, dark in a `prefers-color-scheme: dark` rule that overrides them. */
  theme: ChartQuery['theme'];
  /** transparent: no background rectangle (default solid). */
  background?: ChartQuery['background'];
};

const PAD = { left: 56, right: 24, top: 44, bottom: 40 };
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Roboto, DejaVu Sans, sans-serif"';
/** Average glyph width at 11 px, used to space X labels so they never overlap. */
const LABEL_CHAR_WIDTH = 6.6;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const LINES = [
  { key: 'peak', label: 'Peak Players' },
  { key: 'average', label: 'Average Players' },
] as const;

/** One formatter for every coordinate: fixed decimals give the same bytes for the same input. */
const num = (n: number) => n.toFixed(1);

/** Thousands separators without Intl (several times faster, same text for en-US). */
const count = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/**
 * An id prefix derived from the input (deterministic bytes), cheap to compute: the options and a
 * checksum of the values. Two different charts inline on one page get different ids.
 */
function chartId(series: Series, width: number, height: number, theme: string, background: string): string {
  let checksum = 0;
  for (const p of series.points)
    checksum = (checksum * 31 + (p.peak ?? -1) * 7 + Math.round((p.average ?? -1) * 10)) % 2147483647;
  const key = `${series.points[0]?.start}|${series.points.length}|${width}|${height}|${theme}|${background}|${checksum}`;
  return `pc${sha256Hex(key).slice(0, 10)}`;
}

/** A round step for about four grid intervals: 1, 2 or 5 times a power of ten, at least 1 player. */
function niceStep(max: number): number {
  const raw = max / 4;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].find((m) => m * magnitude >= raw)! * magnitude;
  return Math.max(1, step);
}

function dateLabel(start: number, period: Series['period']): string {
  const d = new Date(start);
  const day = `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
  return period === 'day' ? day : `${day} ${String(d.getUTCHours()).padStart(2, '0')}:00`;
}

/** Runs of consecutive points that have a value: a missing period breaks the line. */
function segments(points: readonly ChartPoint[], key: 'peak' | 'average'): number[][] {
  const runs: number[][] = [];
  let run: number[] = [];
  points.forEach((point, i) => {
    if (point[key] === null) {
      if (run.length) runs.push(run);
      run = [];
    } else run.push(i);
  });
  if (run.length) runs.push(run);
  return runs;
}

/**
 * theme=auto: the dark palette as CSS that overrides the light presentation attributes when the
 * viewer prefers dark, scoped to this chart's id so an inline chart styles nothing else on the page.
 */
function darkSchemeStyle(id: string, background: boolean): string {
  const dark = THEMES.dark;
  const rules: [string, string, string][] = [
    ['.legend-text, .record-label', 'fill', dark.text],
    ['.y-label, .x-label, .no-data', 'fill', dark.muted],
    ['.grid', 'stroke', dark.grid],
    ...(['peak', 'average'] as const).flatMap((key): [string, string, string][] => [
      [`.line-${key}, .legend-${key}`, 'stroke', dark[key]],
      [`.marker-${key}`, 'fill', dark[key]],
      [`.stop-${key}`, 'stop-color', dark[key]],
    ]),
    ['.record-marker', 'stroke', dark.peak],
    ...(background ? [['.background', 'fill', dark.background] as [string, string, string]] : []),
  ];
  const css = rules
    .map(([selectors, property, value]) => {
      const scoped = selectors.split(', ').map((selector) => `#${id} ${selector}`);
      return `${scoped.join(',')}{${property}:${value}}`;
    })
    .join('');
  return `<style>@media (prefers-color-scheme: dark){${css}}</style>`;
}

/** The highest peak of the series (the first, on a tie), or undefined when it has no data. */
function recordPeak(points: readonly ChartPoint[]): { index: number; peak: number } | undefined {
  let record: { index: number; peak: number } | undefined;
  points.forEach((point, index) => {
    if (point.peak !== null && (!record || point.peak > record.peak)) record = { index, peak: point.peak };
  });
  return record;
}

type Colours = (typeof THEMES)[keyof typeof THEMES];

/** Where things go: the plot area, the value scale and the point positions of one chart. */
type Frame = {
  points: readonly ChartPoint[];
  period: Series['period'];
  colours: Colours;
  plotW: number;
  plotH: number;
  baseline: number;
  /** The grid's step and the top of the value scale, a multiple of it. */
  step: number;
  yMax: number;
  /** Marker radius: smaller as the points crowd. */
  radius: number;
  x: (i: number) => number;
  y: (value: number) => number;
};

function chartFrame(
  points: readonly ChartPoint[],
  period: Series['period'],
  colours: Colours,
  peaks: number[],
  width: number,
  height: number,
): Frame {
  const plotW = width - PAD.left - PAD.right;
  const plotH = height - PAD.top - PAD.bottom;
  const baseline = PAD.top + plotH;
  const step = niceStep(Math.max(4, ...peaks));
  const yMax = Math.max(step, Math.ceil(Math.max(0, ...peaks) / step) * step);
  const radius = points.length > 200 ? 1.2 : points.length > 60 ? 2 : 3;
  return {
    points,
    period,
    colours,
    plotW,
    plotH,
    baseline,
    step,
    yMax,
    radius,
    x: (i) => PAD.left + (points.length === 1 ? plotW / 2 : (i * plotW) / (points.length - 1)),
    y: (value) => baseline - (value / yMax) * plotH,
  };
}

/** Horizontal grid lines with their value labels, one per step from 0 to the top of the scale. */
function gridLines({ plotW, step, yMax, y, colours }: Frame): string {
  const grid: string[] = [];
  for (let value = 0; value <= yMax; value += step) {
    grid.push(
      `<line class="grid" x1="${num(PAD.left)}" y1="${num(y(value))}" x2="${num(PAD.left + plotW)}" y2="${num(y(value))}" stroke="${colours.grid}" stroke-width="1"/>`,
      `<text class="y-label" x="${num(PAD.left - 8)}" y="${num(y(value) + 4)}" text-anchor="end" font-size="11" fill="${colours.muted}">${count(value)}</text>`,
    );
  }
  return grid.join('');
}

/** Date labels under the plot, every how many points it takes for them not to overlap. */
function xAxisLabels({ points, period, plotW, baseline, x, colours }: Frame): string {
  const labelWidth = dateLabel(points[0]?.start ?? 0, period).length * LABEL_CHAR_WIDTH + 12;
  const spacing = points.length > 1 ? plotW / (points.length - 1) : plotW;
  const every = Math.max(1, Math.ceil(labelWidth / spacing));
  return points
    .map((point, i) =>
      i % every === 0
        ? `<text class="x-label" x="${num(x(i))}" y="${num(baseline + 20)}" text-anchor="middle" font-size="11" fill="${colours.muted}">${escapeXml(dateLabel(point.start, period))}</text>`
        : '',
    )
    .join('');
}

/** Per line (peak, average): the filled areas, then the lines, then the markers of its runs. */
function seriesPaths({ points, baseline, radius, x, y, colours }: Frame, id: string): string {
  // A point between gaps has no line to show it: its marker is drawn large enough to see.
  const isolatedRadius = Math.max(radius, 3);
  // Every coordinate is formatted once, then shared by the area, the line and the markers.
  const xs = points.map((_, i) => num(x(i)));
  const base = num(baseline);
  return LINES.map(({ key }) => {
    const colour = colours[key];
    const ys = points.map((p) => (p[key] === null ? '' : num(y(p[key]!))));
    let areas = '';
    let lines = '';
    let markers = '';
    for (const run of segments(points, key)) {
      const path = run.map((i) => `${xs[i]} ${ys[i]}`).join(' L');
      areas += `<path class="area-${key}" d="M${xs[run[0]!]} ${base} L${path} L${xs[run.at(-1)!]} ${base} Z" fill="url(#${id}-${key})"/>`;
      lines += `<path class="line-${key}" d="M${path}" fill="none" stroke="${colour}" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"/>`;
      const r = run.length === 1 ? isolatedRadius : radius;
      for (const i of run)
        markers += `<circle class="marker-${key}" cx="${xs[i]}" cy="${ys[i]}" r="${r}" fill="${colour}"/>`;
    }
    return areas + lines + markers;
  }).join('');
}

function legendItems(colours: Colours): string {
  return LINES.map(
    ({ key, label }, i) =>
      `<g class="legend-item"><line class="legend-${key}" x1="${num(PAD.left + i * 150)}" y1="20" x2="${num(PAD.left + i * 150 + 18)}" y2="20" stroke="${colours[key]}" stroke-width="3"/><text class="legend-text" x="${num(PAD.left + i * 150 + 24)}" y="24" font-size="12" fill="${colours.text}">${label}</text></g>`,
  ).join('');
}

function lineGradients(id: string, colours: Colours): string {
  return LINES.map(
    ({ key }) =>
      `<linearGradient id="${id}-${key}" x1="0" y1="0" x2="0" y2="1"><stop class="stop-${key}" offset="0" stop-color="${colours[key]}" stop-opacity="0.25"/><stop class="stop-${key}" offset="1" stop-color="${colours[key]}" stop-opacity="0"/></linearGradient>`,
  ).join('');
}

/**
 * The period's record peak: a ring around its marker and a label with its count and time, kept
 * inside the plot's width. Empty when the series has no data.
 */
function recordMark({ points, period, radius, x, y, colours }: Frame, width: number): string {
  const record = recordPeak(points);
  if (!record) return '';
  const cx = x(record.index);
  const cy = y(record.peak);
  const anchor = cx < PAD.left + 80 ? 'start' : cx > width - PAD.right - 80 ? 'end' : 'middle';
  const label = `Record ${count(record.peak)} · ${dateLabel(points[record.index]!.start, period)}`;
  return (
    `<g class="record"><circle class="record-marker" cx="${num(cx)}" cy="${num(cy)}" r="${radius + 3}" fill="none" stroke="${colours.peak}" stroke-width="1.5"/>` +
    `<text class="record-label" x="${num(cx)}" y="${num(cy - radius - 6)}" text-anchor="${anchor}" font-size="11" font-weight="600" fill="${colours.text}">${escapeXml(label)}</text></g>`
  );
}

/** The accessible description: the span, and its peak and average when there is data. */
function describeSeries(span: string, peaks: number[], averages: number[]): string {
  return peaks.length
    ? `Over ${span}: peak ${count(Math.max(...peaks))} players, average ${(averages.reduce((a, b) => a + b, 0) / averages.length).toFixed(1)} players.`
    : `No data yet for ${span}.`;
}

/**
 * The player chart (SPEC 4.9) as an SVG string: a pure function of the series and the options.
 * Ids derive from the input, so two different charts inline on one page never share an id.
 */
export function drawPlayerChart(series: Series, { width, height, theme, background = 'solid' }: DrawOptions): string {
  const colours = THEMES[theme === 'auto' ? 'light' : theme];
  const { points, period, days } = series;
  const id = chartId(series, width, height, theme, background);
  const peaks = points.flatMap((p) => (p.peak === null ? [] : [p.peak]));
  const averages = points.flatMap((p) => (p.average === null ? [] : [p.average]));
  const frame = chartFrame(points, period, colours, peaks, width, height);

  const span = days === 1 ? 'the last day' : `the last ${days} days`;
  const noData = peaks.length
    ? ''
    : `<text class="no-data" x="${num(PAD.left + frame.plotW / 2)}" y="${num(PAD.top + frame.plotH / 2)}" text-anchor="middle" font-size="14" fill="${colours.muted}">No data yet</text>`;

  const solid = background === 'solid';
  const open = `<svg xmlns="http://www.w3.org/2000/svg"${theme === 'auto' ? ` id="${id}"` : ''} width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${id}-title ${id}-desc" ${FONT}>`;
  const about = `<title id="${id}-title">Players over ${escapeXml(span)}</title><desc id="${id}-desc">${escapeXml(describeSeries(span, peaks, averages))}</desc>`;
  const style = theme === 'auto' ? darkSchemeStyle(id, solid) : '';
  const backdrop = solid
    ? `<rect class="background" width="${width}" height="${height}" fill="${colours.background}"/>`
    : '';
  return `${open}${about}${style}<defs>${lineGradients(id, colours)}</defs>${backdrop}${legendItems(colours)}${gridLines(frame)}${xAxisLabels(frame)}${seriesPaths(frame, id)}${recordMark(frame, width)}${noData}</svg>`;
}
