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
