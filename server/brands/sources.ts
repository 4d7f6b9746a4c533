import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { z } from 'zod';
import { DataError } from '../data-files.ts';
import { sha256Hex } from '../digest.ts';
import { BRANDS, BRAND_NAMES, type BrandName, type VariantSpec } from './brands.ts';

/** Limits on source artwork: big enough to downscale from, small enough to decode safely. */
export const SOURCE_LIMITS = { minRasterWidth: 1024, maxSide: 8192, maxPixels: 40_000_000 } as const;

/** One variant's source as the tree records it (catalog.json); aliases point at the same bytes. */
export const BrandSourceRecord = z.strictObject({
  brand: z.enum(BRAND_NAMES as [BrandName, ...BrandName[]]),
  variant: z.string().min(1),
  format: z.enum(['png', 'svg']),
  width: z.int().positive(),
  height: z.int().positive(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type BrandSourceRecord = z.infer<typeof BrandSourceRecord>;

export const brandKey = (brand: string, variant: string) => `${brand}/${variant}`;
export const sourceFile = (source: Pick<BrandSourceRecord, 'sha256' | 'format'>) =>
  `files/${source.sha256}.${source.format}`;

export type LoadedBrandSource = BrandSourceRecord & { bytes: Uint8Array };

/**
 * Reads data/brands/<brand>/<file> for every variant of SPEC 2.8 and checks each: it decodes, its
 * format matches its name (PNG or SVG), and its size is within SOURCE_LIMITS. Fails on the first bad
 * file with a message naming it.
 */
export async function loadBrandSources(dataDir: string): Promise<LoadedBrandSource[]> {
  const loaded = new Map<string, Omit<LoadedBrandSource, 'brand' | 'variant'>>();
  const sources: LoadedBrandSource[] = [];
  for (const brand of BRAND_NAMES) {
    for (const [variant, spec] of Object.entries(BRANDS[brand]) as [string, VariantSpec][]) {
      const file = join(dataDir, 'brands', brand, spec.source);
      let source = loaded.get(file);
      if (!source) {
        source = await checkSource(file);
        loaded.set(file, source);
      }
      sources.push({ brand, variant, ...source });
    }
  }
  return sources;
}

async function checkSource(file: string) {
  const bytes = await readFile(file).catch(() => {
    throw new DataError(`${file}: missing (every brand variant of SPEC 2.8 needs its source image)`);
  });
  const expected = file.endsWith('.svg') ? 'svg' : 'png';
  const meta = await sharp(bytes, { limitInputPixels: SOURCE_LIMITS.maxPixels })
    .metadata()
    .catch((error: Error) => {
      throw new DataError(`${file}: not a readable ${expected.toUpperCase()} image (${error.message})`);
    });
  const { width = 0, height = 0 } = meta;
  if (meta.format !== expected) throw new DataError(`${file}: format: ${meta.format}, expected ${expected}`);
  if (width > SOURCE_LIMITS.maxSide || height > SOURCE_LIMITS.maxSide || width * height > SOURCE_LIMITS.maxPixels) {
    throw new DataError(
      `${file}: dimensions: ${width}x${height} exceed ${SOURCE_LIMITS.maxSide} px a side or ${SOURCE_LIMITS.maxPixels} pixels`,
    );
  }
  if (expected === 'png' && width < SOURCE_LIMITS.minRasterWidth) {
    throw new DataError(
      `${file}: width: ${width} px, a PNG source needs at least ${SOURCE_LIMITS.minRasterWidth} so sizes up to 1024 are downscaled`,
    );
  }
  return { format: expected, width, height, sha256: sha256Hex(bytes), bytes: new Uint8Array(bytes) } as const;
}
