import { createHash } from 'node:crypto';
import { readClassFiles, type ClassFiles } from './class-files.ts';
import type { CatalogVersion, PluginVersionRecord } from './schema.ts';

/**
 * A version as the catalog holds it: its record, with what is derived from its files. Apart from
 * catalog.ts, so that the loader and the modules that read a loaded catalog (integrity, present)
 * do not import each other.
 */

export type JarDigests = { sha256: string; sha512: string };

/** Both digests of a JAR's bytes in one pass over them, lowercase hex. */
export function jarDigests(bytes: Uint8Array): JarDigests {
  return {
    sha256: createHash('sha256').update(bytes).digest('hex'),
    sha512: createHash('sha512').update(bytes).digest('hex'),
  };
}

/** What the build reads of a JAR once and remembers by its file (build cache): its digests and what its class files need (issue 39). */
export type JarFacts = JarDigests & { classes: ClassFiles };

export function readJarFacts(bytes: Uint8Array): JarFacts {
  return { ...jarDigests(bytes), classes: readClassFiles(bytes) };
}

/** The classFileVersion the bytes prove; undefined without classes (or when their headers cannot be read). */
export const classFileVersionOf = (classes: ClassFiles): number | undefined =>
  classes.kind === 'classes' ? classes.major : undefined;

/**
 * A record as the catalog holds it: with its sha512 and its changelog. One constructor, so a
 * loaded and a just-released version have the same keys in the same order (catalog.json is compared
 * as text from one build to the next).
 */
export function catalogVersion(record: PluginVersionRecord, sha512: string, changelog?: string): CatalogVersion {
  return { ...record, sha512, ...(changelog === undefined ? {} : { changelog }) };
}
