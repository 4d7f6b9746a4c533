import { PUBLIC_HEADERS } from '../http/cache.ts';
import type { Catalog } from './catalog.ts';
import type { JarDigests } from './catalog-version.ts';
import { HASH_ALGORITHMS, byHashPath, checksumPath, downloadPath, type HashAlgorithm } from './paths.ts';
import type { CatalogVersion } from './schema.ts';

/**
 * Integrity of the JARs (issue 15): sha512 beside sha256, RFC 9530 Repr-Digest on every JAR answer,
 * `sha256sum -c` sidecars and lookup by hash. The digests are derived from the JAR by the build,
 * never stored in data/.
 */

/** RFC 9530 Repr-Digest: structured-field byte sequences, base64 of the raw digests. */
function reprDigest(version: JarDigests): string {
  const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
  return `sha-256=:${b64(version.sha256)}:, sha-512=:${b64(version.sha512)}:`;
}

/** A version's sidecar in `sha256sum -c` / `sha512sum -c` format (text mode: two spaces). */
export function checksumLine(version: CatalogVersion, algorithm: HashAlgorithm): string {
  return `${version[algorithm]}  ${version.fileName}\n`;
}

/** Every precomputed integrity URL: per version, both sidecars and both lookups. */
export function listIntegrityPaths(catalog: Catalog): string[] {
  return catalog.versions.flatMap((version) =>
    HASH_ALGORITHMS.flatMap((algorithm) => [
      checksumPath(version.id, algorithm),
      byHashPath(algorithm, version[algorithm]),
    ]),
  );
}

/** Per catalog, per algorithm: digest -> version. Newest first wins when two records share bytes. */
const indexes = new WeakMap<Catalog, Record<HashAlgorithm, Map<string, CatalogVersion>>>();

export function findByHash(catalog: Catalog, algorithm: HashAlgorithm, hex: string): CatalogVersion | undefined {
  let index = indexes.get(catalog);
  if (!index) {
    index = { sha256: new Map(), sha512: new Map() };
    for (const version of catalog.versions)
      for (const name of HASH_ALGORITHMS) if (!index[name].has(version[name])) index[name].set(version[name], version);
    indexes.set(catalog, index);
  }
  return index[algorithm].get(hex.toLowerCase());
}

/** A web page may read a JAR answer's digests and its immutable location, besides the rate limit fields. */
export const JAR_EXPOSED_HEADERS = `${PUBLIC_HEADERS['access-control-expose-headers']}, Repr-Digest, Content-Location`;

/** Headers every JAR answer carries (the latest ones add Content-Location). */
export function integrityHeaders(version: JarDigests & { id: string }, latest: boolean): Record<string, string> {
  return {
    'repr-digest': reprDigest(version),
    ...(latest ? { 'content-location': downloadPath(version.id) } : {}),
  };
}
