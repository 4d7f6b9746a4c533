import { BRANDS, BRAND_NAMES, COMMON_SIZES, type BrandName, type VariantSpec } from '../../../server/brands/brands.ts';
import { brandImagePath } from '../../../server/brands/paths.ts';
import { RASTER_FORMAT_NAMES } from '../../../server/brands/formats.ts';
import { MAX_SIZE } from '../../../server/brands/schema.ts';
import { brandKey, type BrandSourceRecord } from '../../../server/brands/source-record.ts';
import type { ServerSoftware } from '../../../server/versions/software.ts';

/**
 * The software each brand is the logo of (its display name is that software's name, SPEC 2.3; the
 * brand names of SPEC 2.8 are lowercase URL names), and the variants that make its small square
 * mark on the downloads page, per colour scheme.
 */
export const BRAND_SOFTWARE: Record<BrandName, { software: ServerSoftware; mark: { light: string; dark?: string } }> = {
  papermc: { software: 'PaperMC', mark: { light: 'none' } },
  velocity: { software: 'Velocity', mark: { light: 'blue-no-text', dark: 'white-no-text' } },
  folia: { software: 'Folia', mark: { light: 'default' } },
  canvasmc: { software: 'CanvasMC', mark: { light: 'default' } },
  leafmc: { software: 'LeafMC', mark: { light: 'default' } },
  purpurmc: { software: 'Purpur', mark: { light: 'default' } },
};

/** How a brand is named for people: PaperMC, not papermc. */
const brandDisplayName = (brand: BrandName): string => BRAND_SOFTWARE[brand].software;

/** A static link's accessible name: "PaperMC light logo, 256 px, PNG". */
function brandLinkName(brand: BrandName, variant: string, size: number | undefined, format: string): string {
  return `${brandDisplayName(brand)} ${variant} logo, ${size ? `${size} px` : 'original size'}, ${format.toUpperCase()}`;
}

export type VariantKit = {
  brand: BrandName;
  /** The brand's display name (PaperMC). */
  name: string;
  variant: string;
  source: BrandSourceRecord;
  /** The background JPEG flattens onto: the one the artwork is drawn for. */
  background: VariantSpec['background'];
  formats: readonly string[];
  /** Static links: the original size first (size undefined), then every precomputed size. */
  links: { size: number | undefined; hrefs: { format: string; href: string; label: string }[] }[];
  /** What the previews show: a precomputed PNG at 256 px. */
  preview: string;
};

/** Every brand and variant of SPEC 2.8 with its precomputed static links, from the tree's sources. */
export function brandKit(
  sources: ReadonlyMap<string, BrandSourceRecord>,
): { brand: BrandName; name: string; variants: VariantKit[] }[] {
  return BRAND_NAMES.map((brand) => ({
    brand,
    name: brandDisplayName(brand),
    variants: (Object.entries(BRANDS[brand]) as [string, VariantSpec][]).map(([variant, spec]) => {
      const source = sources.get(brandKey(brand, variant))!;
      const formats = source.format === 'svg' ? [...RASTER_FORMAT_NAMES, 'svg'] : [...RASTER_FORMAT_NAMES];
      const sizes = [undefined, ...COMMON_SIZES];
      return {
        brand,
        name: brandDisplayName(brand),
        variant,
        source,
        background: spec.background,
        formats,
        links: sizes.map((size) => ({
          size,
          hrefs: formats.map((format) => ({
            format,
            href: brandImagePath(brand, variant, format, size),
            label: brandLinkName(brand, variant, size, format),
          })),
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
          name: brandDisplayName(brand),
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
