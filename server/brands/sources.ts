import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DataError } from '../data-files.ts';
import { sha256Hex } from '../helpers/digest.ts';
import type { DataFileMemory } from '../data-file-memory.ts';
import { BRANDS, BRAND_NAMES, type VariantSpec } from './brands.ts';
import type { BrandSourceRecord, CheckedBrandSource } from './source-record.ts';
import { loadSharp } from './sharp.ts';

/** Limits on source artwork: big enough to downscale from, small enough to decode safely. */
const SOURCE_LIMITS = { minRasterWidth: 1024, maxSide: 8192, maxPixels: 40_000_000 } as const;

export type LoadedBrandSource = BrandSourceRecord & { bytes: Uint8Array };

/** What checking the brand sources remembers of data/brands' files: what a source was checked to be. */
export type BrandFileValues = { brands: CheckedBrandSource };

/**
 * Reads data/brands/<brand>/<file> for every variant of SPEC 2.8 and checks each: it decodes, its
 * format matches its name (PNG or SVG), and its size is within SOURCE_LIMITS. Fails on the first bad
 * file with a message naming it. With `memory`, a source whose file and bytes are as when it was last
 * checked is not decoded again (a release then never loads sharp).
 */
export async function loadBrandSources(
  dataDir: string,
  memory?: DataFileMemory<BrandFileValues>,
): Promise<LoadedBrandSource[]> {
  const loaded = new Map<string, Omit<LoadedBrandSource, 'brand' | 'variant'>>();
  const sources: LoadedBrandSource[] = [];
  for (const brand of BRAND_NAMES) {
    for (const [variant, spec] of Object.entries(BRANDS[brand]) as [string, VariantSpec][]) {
      const file = join(dataDir, 'brands', brand, spec.source);
      let source = loaded.get(file);
      if (!source) {
        source = await checkSource(file, `${brand}/${spec.source}`, memory);
        loaded.set(file, source);
      }
      sources.push({ brand, variant, ...source });
    }
  }
  return sources;
}

async function checkSource(file: string, name: string, memory: DataFileMemory<BrandFileValues> | undefined) {
  const missing = () => {
    throw new DataError(`${file}: missing (every brand variant of SPEC 2.8 needs its source image)`);
  };
  const before = memory ? await stat(file).catch(missing) : undefined;
  const bytes = await readFile(file).catch(missing);
  const sha256 = sha256Hex(bytes);
  const known = before && memory!.recall('brands', name, before);
  if (known?.sha256 === sha256) return { ...known, bytes: new Uint8Array(bytes) };
  const expected = file.endsWith('.svg') ? 'svg' : 'png';
  const sharp = await loadSharp();
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
  const checked: CheckedBrandSource = { format: expected, width, height, sha256 };
  if (before) memory!.remember('brands', name, before, checked);
  return { ...checked, bytes: new Uint8Array(bytes) };
}
