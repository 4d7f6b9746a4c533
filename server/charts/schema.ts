import { z } from 'zod';

const intIn = (min: number, max: number, fallback: number) =>
  z
    .string({ error: `must be an integer from ${min} to ${max}` })
    .regex(/^\d{1,5}$/, { error: `must be an integer from ${min} to ${max}` })
    .transform(Number)
    .refine((n) => n >= min && n <= max, { error: `must be an integer from ${min} to ${max}` })
    .optional()
    .transform((n) => n ?? fallback);

/** SPEC 4.9/4.10: the chart query, defaults filled in. */
export const ChartQuery = z.object({
  days: intIn(1, 365, 7),
  width: intIn(200, 2000, 800),
  height: intIn(200, 2000, 400),
  theme: z.enum(['light', 'dark'], { error: 'must be light or dark' }).default('light'),
  format: z.enum(['svg', 'png'], { error: 'must be svg or png' }).default('svg'),
});
export type ChartQuery = z.output<typeof ChartQuery>;

const Players = z.int({ error: 'must be an integer from 0 to 1000000' }).min(0, { error: 'must be an integer from 0 to 1000000' }).max(1_000_000, { error: 'must be an integer from 0 to 1000000' });

/** POST /api/servers/:id/stats: one count now, or up to 1,000 timed samples. */
export const PlayersBody = z.strictObject({ players: Players });
export const SamplesBody = z.strictObject({
  samples: z
    .array(z.strictObject({ at: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 timestamp' }), players: Players }), {
      error: 'must be an array of {"at": ISO 8601, "players": n}',
    })
    .min(1, { error: 'must hold at least one sample' })
    .max(1000, { error: 'must hold at most 1000 samples' }),
});

export const ServerId = z.uuid({ error: 'id must be a UUID' });
