import { z } from 'zod';
import { queryInt } from '../http/validate.ts';

/** SPEC 4.9's ranges and defaults (the site's playground reads them too). */
export const CHART_RANGES = {
  days: { min: 1, max: 365, default: 7 },
  width: { min: 200, max: 2000, default: 800 },
  height: { min: 200, max: 2000, default: 400 },
} as const;
export const CHART_THEMES = ['light', 'dark', 'auto'] as const;
export const CHART_BACKGROUNDS = ['solid', 'transparent'] as const;
export const CHART_FORMATS = ['svg', 'png', 'json', 'csv'] as const;

const ranged = (name: keyof typeof CHART_RANGES, description: string) => {
  const { min, max, default: fallback } = CHART_RANGES[name];
  return queryInt(min, max, description, fallback);
};

/** SPEC 4.9/4.10: the chart query, defaults filled in. */
export const ChartQuery = z.object({
  days: ranged('days', 'Days covered, ending now (UTC)'),
  width: ranged('width', 'Width in pixels'),
  height: ranged('height', 'Height in pixels'),
  theme: z.enum(CHART_THEMES, { error: 'must be light, dark or auto' }).default('light').meta({
    description:
      "light: white background; dark: #1a1a1a; auto: one SVG with both, dark when the viewer's system prefers it (`prefers-color-scheme`; PNG shows light)",
  }),
  background: z
    .enum(CHART_BACKGROUNDS, { error: 'must be solid or transparent' })
    .default('solid')
    .meta({ description: "solid: the theme's background; transparent: none, the page shows through" }),
  format: z.enum(CHART_FORMATS, { error: 'must be svg, png, json or csv' }).default('svg').meta({
    description:
      'png rasterises the same chart for places that cannot show SVG; json and csv answer the series it draws (time, peak, average; a gap is null in JSON, empty in CSV)',
  }),
});
export type ChartQuery = z.output<typeof ChartQuery>;

const Players = z
  .int({ error: 'must be an integer from 0 to 1000000' })
  .min(0, { error: 'must be an integer from 0 to 1000000' })
  .max(1_000_000, { error: 'must be an integer from 0 to 1000000' });

/** POST /api/servers/:id/stats: one count now, or up to 1,000 timed samples. */
export const PlayersBody = z
  .strictObject({ players: Players })
  .meta({ id: 'PlayersNow', description: 'One player count, taken now' });
export const SamplesBody = z
  .strictObject({
    samples: z
      .array(
        z.strictObject({
          at: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 timestamp' }),
          players: Players,
        }),
        {
          error: 'must be an array of {"at": ISO 8601, "players": n}',
        },
      )
      .min(1, { error: 'must hold at least one sample' })
      .max(1000, { error: 'must hold at most 1000 samples' }),
  })
  .meta({ id: 'PlayerSamples', description: 'Up to 1,000 timed counts, at most 5 minutes ahead and within 365 days' });

// A UUID is the same in any letter case (RFC 9562); stores key it in lower case, as `server add` prints it.
export const ServerId = z
  .uuid({ error: 'must be a UUID' })
  .toLowerCase()
  .meta({ description: "The server's id (printed by `depot server add`), any letter case" });

/** The `:id` of /api/servers/:id/...: the routes validate it and the document shows it. */
export const ServerPath = z.object({ id: ServerId });
