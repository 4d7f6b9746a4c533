import type { Stats } from 'node:fs';
import type { CheckedBrandSource } from './brands/source-record.ts';
import type { JarFacts } from './versions/catalog-version.ts';
import type { PluginVersionRecord } from './versions/schema.ts';

/** What a remembered file of data/ held, by kind: a JAR's digests and class files, a record, a changelog's text. */
export type RememberedValues = {
  jars: JarFacts;
  records: PluginVersionRecord;
  changelogs: string;
  brands: CheckedBrandSource;
  /** The build's own sources (server/, build/, site/): their sha256, for the digests of the code. */
  sources: string;
};
export type RememberedKind = keyof RememberedValues;

/**
 * Files of data/ already read and validated, by the identity of their file (device, inode, size,
 * modification and change times): a file that did not change since need not be read again. Files
 * are named as in their folder (`<id>.json` and `<id>.md` in versions/, `<id>.jar` in jars/,
 * `<brand>/<file>` in brands/).
 */
export type DataFileMemory = {
  recall<K extends RememberedKind>(kind: K, name: string, file: Stats): RememberedValues[K] | undefined;
  remember<K extends RememberedKind>(kind: K, name: string, file: Stats, value: RememberedValues[K]): void;
};
