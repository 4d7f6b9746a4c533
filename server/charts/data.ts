import { z } from 'zod';
import type { Series } from './aggregate.ts';

/** An average as the data formats give it: two decimals (the drawing's 0.1 px is coarser). */
const rounded = (average: number | null) => (average === null ? null : Math.round(average * 100) / 100);

/** format=json: the series the chart draws, one entry per period; a period without samples is null. */
export const ChartData = z
  .object({
    period: z.enum(['hour', 'day']).meta({ description: 'hour when days <= 2, day (UTC) otherwise' }),
    days: z.int(),
    points: z.array(
      z.object({
        time: z.iso.datetime().meta({ description: 'Start of the period (UTC)' }),
        peak: z.int().nullable().meta({ description: 'Highest sample of the period; null: no samples' }),
        average: z.number().nullable().meta({ description: 'Mean of its samples, two decimals; null: no samples' }),
      }),
    ),
  })
  .meta({ id: 'ChartData' });
export type ChartData = z.output<typeof ChartData>;

export function chartData(series: Series): ChartData {
  return {
    period: series.period,
    days: series.days,
    points: series.points.map((p) => ({
      time: new Date(p.start).toISOString(),
      peak: p.peak,
      average: rounded(p.average),
    })),
  };
}

/** format=csv: `time,peak,average`, a row per period; a gap leaves both values empty. */
export function chartCsv(series: Series): string {
  const rows = chartData(series).points.map((p) => `${p.time},${p.peak ?? ''},${p.average ?? ''}`);
  return `time,peak,average\r\n${rows.join('\r\n')}\r\n`;
}
