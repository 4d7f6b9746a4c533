import { z } from 'zod';
import { BRAND_NAMES, type BrandName } from './brands.ts';

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

/** What checking a source found, remembered between builds with the file's identity and digest. */
export type CheckedBrandSource = Pick<BrandSourceRecord, 'format' | 'width' | 'height' | 'sha256'>;
