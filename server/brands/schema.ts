import { z } from 'zod';
import { RASTER_FORMAT_NAMES } from './formats.ts';

export const MAX_SIZE = 2048;
const FORMATS = [...RASTER_FORMAT_NAMES, 'svg'] as const;

const Size = z
  .string({ error: `must be an integer from 1 to ${MAX_SIZE}` })
  .regex(/^[1-9]\d{0,3}$/, { error: `must be an integer from 1 to ${MAX_SIZE}` })
  .transform(Number)
  .refine((n) => n <= MAX_SIZE, { error: `must be an integer from 1 to ${MAX_SIZE}` });

/** SPEC 4.7's query. The variant is checked against the brand afterwards (404, not 400). */
export const BrandQuery = z.object({
  variant: z.string({ error: 'must be one variant name' }).optional(),
  size: Size.optional(),
  format: z.enum(FORMATS, { error: `must be one of ${FORMATS.join(', ')} (svg only for SVG sources)` }).optional(),
  download: z
    .enum(['true', '1', 'false', '0'], { error: 'must be true, 1, false or 0' })
    .transform((value) => value === 'true' || value === '1')
    .optional(),
});
export type BrandQuery = z.output<typeof BrandQuery>;

/** Clean static links: `<size>.<ext>` under a variant, `<variant>.<ext>` under a brand. */
export const SizedFileName = z.string().regex(/^[1-9]\d{0,3}\.(png|webp|jpg|gif|svg)$/);
export const VariantFileName = z.string().regex(/^[a-z-]+\.(png|webp|jpg|gif|svg)$/);
