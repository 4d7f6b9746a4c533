import {
  BRANDS,
  BRAND_NAMES,
  COMMON_SIZES,
  FLATTEN_COLOURS,
  brandImagePath,
  type BrandName,
  type VariantSpec,
} from '../../../server/brands/brands.ts';
import { RASTER_FORMAT_NAMES } from '../../../server/brands/formats.ts';
import { MAX_SIZE } from '../../../server/brands/schema.ts';
import { brandKey, type BrandSourceRecord } from '../../../server/brands/sources.ts';

export type VariantKit = {
  brand: BrandName;
  variant: string;
  source: BrandSourceRecord;
  /** The background JPEG flattens onto: the one the artwork is drawn for. */
  background: VariantSpec['background'];
  formats: readonly string[];
  /** Static links: the original size first (size undefined), then every precomputed size. */
  links: { size: number | undefined; hrefs: { format: string; href: string }[] }[];
  /** What the previews show: a precomputed PNG at 256 px. */
  preview: string;
};

/** Every brand and variant of SPEC 2.8 with its precomputed static links, from the tree's sources. */
export function brandKit(
  sources: ReadonlyMap<string, BrandSourceRecord>,
): { brand: BrandName; variants: VariantKit[] }[] {
  return BRAND_NAMES.map((brand) => ({
    brand,
    variants: (Object.entries(BRANDS[brand]) as [string, VariantSpec][]).map(([variant, spec]) => {
      const source = sources.get(brandKey(brand, variant))!;
      const formats = source.format === 'svg' ? [...RASTER_FORMAT_NAMES, 'svg'] : [...RASTER_FORMAT_NAMES];
      const sizes = [undefined, ...COMMON_SIZES];
      return {
        brand,
        variant,
        source,
        background: spec.background,
        formats,
        links: sizes.map((size) => ({
          size,
          hrefs: formats.map((format) => ({ format, href: brandImagePath(brand, variant, format, size) })),
        })),
        preview: brandImagePath(brand, variant, 'png', 256),
      };
    }),
  }));
}

/** What the URL builder's script needs: brands, their variants, which take svg, and the size range. */
export function builderData(sources: ReadonlyMap<string, BrandSourceRecord>) {
  return {
    maxSize: MAX_SIZE,
    formats: [...RASTER_FORMAT_NAMES],
    brands: Object.fromEntries(
      BRAND_NAMES.map((brand) => [
        brand,
        {
          variants: Object.keys(BRANDS[brand]),
          /** Which background each variant is drawn for: the preview shows it on that one. */
          backgrounds: Object.fromEntries(
            (Object.entries(BRANDS[brand]) as [string, VariantSpec][]).map(([variant, spec]) => [
              variant,
              spec.background,
            ]),
          ),
          svg: sources.get(brandKey(brand, 'default'))?.format === 'svg',
        },
      ]),
    ),
  };
}
export type BuilderData = ReturnType<typeof builderData>;

export { FLATTEN_COLOURS };
