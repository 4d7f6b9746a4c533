import type { Stats } from 'node:fs';

/**
 * Files of data/ already read and validated, by the identity of their file (device, inode, size,
 * modification and change times): a file that did not change since need not be read again. Files
 * are named as in their folder (`<id>.json` and `<id>.md` in versions/, `<id>.jar` in jars/,
 * `<brand>/<file>` in brands/). `Values` is what a remembered file held, by kind: each loader names
 * the kinds it reads (versions/catalog.ts's CatalogFileValues, brands/sources.ts's BrandFileValues),
 * and the build's cache (build/verified-data.ts) holds them all.
 */
export type DataFileMemory<Values> = {
  recall<K extends keyof Values>(kind: K, name: string, file: Stats): Values[K] | undefined;
  remember<K extends keyof Values>(kind: K, name: string, file: Stats, value: Values[K]): void;
};
