import { z } from 'zod';
import { queryInt } from '../http/validate.ts';
import { BRAND_NAMES, findBrand } from './brands.ts';
import { RASTER_FORMAT_NAMES, type OutputFormat } from './formats.ts';

export const MAX_SIZE = 2048;
const FORMATS = [...RASTER_FORMAT_NAMES, 'svg'] as const;

/** SPEC 4.7's query. The variant is checked against the brand afterwards (404, not 400). */
export const BrandQuery = z.object({
  variant: z
    .string({ error: 'must be one variant name' })
    .optional()
    .meta({ description: 'A variant of the brand (SPEC 2.8), any letter case; default `default`' }),
  size: queryInt(1, MAX_SIZE, 'Output width in pixels; the height keeps the aspect ratio. Omitted: the original size'),
  format: z
    .enum(FORMATS, { error: `must be one of ${FORMATS.join(', ')} (svg only for SVG sources)` })
    .optional()
    .meta({ description: 'Omitted: the source format (PNG, or SVG for leafmc); svg only for SVG sources' }),
  download: z
    .enum(['true', '1', 'false', '0'], { error: 'must be true, 1, false or 0' })
    .transform((value) => value === 'true' || value === '1')
    .optional()
    .meta({ description: '`true` or `1`: Content-Disposition attachment instead of inline' }),
});
export type BrandQuery = z.output<typeof BrandQuery>;

export const BrandParam = z.string().meta({ description: `One of ${BRAND_NAMES.join(', ')}, any letter case` });

/** SPEC 2.8: a brand in any letter case in, its name out; SPEC 7.1: one that names none is a 404 listing all six. */
const KnownBrand = BrandParam.transform((name, ctx) => {
  const brand = findBrand(name);
  if (brand) return brand;
  ctx.addIssue({
    code: 'custom',
    message: `Unknown brand ${JSON.stringify(name)}; available: ${BRAND_NAMES.join(', ')}`,
    params: { availableBrands: BRAND_NAMES },
  });
  return z.NEVER;
});
export const BrandPath = z.object({ brand: KnownBrand });

/** Clean static links: `<size>.<ext>` under a variant, `<variant>.<ext>` under a brand. */
export const SizedFileName = z
  .string()
  .regex(/^[1-9]\d{0,3}\.(png|webp|jpg|gif|svg)$/, {
    error: `expected <size>.<png|webp|jpg|gif|svg> with a size from 1 to ${MAX_SIZE}`,
  })
  .meta({ description: '<size>.<png|webp|jpg|gif|svg>, size from 1 to 2048' });
export const VariantFileName = z
  .string()
  .regex(/^[a-z-]+\.(png|webp|jpg|gif|svg)$/, { error: 'expected <variant>.<png|webp|jpg|gif|svg>' })
  .meta({ description: '<variant>.<png|webp|jpg|gif|svg>: the original size; any letter case' });

/** A file name in any letter case, checked by `name`, split at its dot. */
const fileParts = (name: z.ZodString) =>
  z
    .string()
    .transform((file) => file.toLowerCase())
    .pipe(name)
    .transform((file) => {
      const [stem, format] = file.split('.') as [string, OutputFormat];
      return { stem, format };
    });
const lowerCase = z.string().transform((name) => name.toLowerCase());

/**
 * The parameters of `/brand/:brand/:variant/:file` after the brand: sizes up to four digits pass
 * here, so one past MAX_SIZE is the query's 400, not a 404.
 */
export const SizedLinkPath = z.object({ variant: lowerCase, file: fileParts(SizedFileName) });
/** The parameters of `/brand/:brand/:file` after the brand: the file names the variant. */
export const VariantLinkPath = z.object({ file: fileParts(VariantFileName) });

/** SPEC 2.7, with the variants in SPEC 2.8's order. */
export const BrandList = z
  .object({ brands: z.object(Object.fromEntries(BRAND_NAMES.map((brand) => [brand, z.array(z.string())]))) })
  .meta({ id: 'BrandList' });

/** SPEC 7.1: a missing brand names all six. */
export const BrandNotFound = z
  .object({ error: z.string(), availableBrands: z.array(z.enum(BRAND_NAMES)) })
  .meta({ id: 'BrandNotFound', description: 'Unknown brand: the error and every brand name' });
export const VariantNotFound = z
  .object({ error: z.string(), availableVariants: z.array(z.string()) })
  .meta({ id: 'VariantNotFound', description: "Unknown variant: the error and the brand's variants" });
