import { createHash } from 'node:crypto';
import { H3, HTTPError, getRouterParam, type H3Event } from 'h3';
import type { AppContext } from '../context.ts';
import { CACHE_CONTROL, PUBLIC_HEADERS } from '../http/cache.ts';
import { notFound } from '../http/errors.ts';
import { sendDocument, sendJson } from '../http/json.ts';
import { MEDIA_TYPES } from '../http/media-types.ts';
import type { Catalog } from './catalog.ts';
import { downloadPath, presentVersion } from './present.ts';
import { PLUGIN_VERSION_ID, type CatalogVersion, type PluginVersionRecord } from './schema.ts';

/**
 * Integrity of the JARs (issue 15): sha512 beside sha256, RFC 9530 Repr-Digest on every JAR answer,
 * `sha256sum -c` sidecars and lookup by hash. The digests are derived from the JAR by the build,
 * never stored in data/.
 */
export const HASH_ALGORITHMS = ['sha256', 'sha512'] as const;
export type HashAlgorithm = (typeof HASH_ALGORITHMS)[number];

/** Hex digits of each algorithm's digest, and the pattern of its hex (any letter case: admins paste what their tool prints). */
const HEX_LENGTH: Record<HashAlgorithm, number> = { sha256: 64, sha512: 128 };
const HEX: Record<HashAlgorithm, RegExp> = { sha256: /^[0-9a-fA-F]{64}$/, sha512: /^[0-9a-fA-F]{128}$/ };

export type JarDigests = { sha256: string; sha512: string };

/** Both digests of a JAR's bytes in one pass over them, lowercase hex. */
export function jarDigests(bytes: Uint8Array): JarDigests {
  return {
    sha256: createHash('sha256').update(bytes).digest('hex'),
    sha512: createHash('sha512').update(bytes).digest('hex'),
  };
}

/**
 * A record as the catalog holds it: with its sha512 and its changelog. One constructor, so a
 * loaded and a just-released version have the same keys in the same order (catalog.json is compared
 * as text from one build to the next).
 */
export function catalogVersion(record: PluginVersionRecord, sha512: string, changelog?: string): CatalogVersion {
  return { ...record, sha512, ...(changelog === undefined ? {} : { changelog }) };
}

/** RFC 9530 Repr-Digest: structured-field byte sequences, base64 of the raw digests. */
export function reprDigest(version: JarDigests): string {
  const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
  return `sha-256=:${b64(version.sha256)}:, sha-512=:${b64(version.sha512)}:`;
}

/** A version's sidecar in `sha256sum -c` / `sha512sum -c` format (text mode: two spaces). */
export function checksumLine(version: CatalogVersion, algorithm: HashAlgorithm): string {
  return `${version[algorithm]}  ${version.fileName}\n`;
}

export const checksumPath = (id: string, algorithm: HashAlgorithm) => `${downloadPath(id)}.${algorithm}`;
export const byHashPath = (algorithm: HashAlgorithm, hex: string) => `/api/plugin-versions/by-hash/${algorithm}/${hex}`;

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

const NOT_FOUND_HEADERS = { 'cache-control': CACHE_CONTROL.notFound };

/** Sidecars and lookup by hash, mounted at /api/plugin-versions beside versionRoutes. */
export function integrityRoutes(ctx: AppContext): H3 {
  const app = new H3();
  for (const algorithm of HASH_ALGORITHMS) {
    app.get(`/download/:id.${algorithm}`, (event) => {
      const id = getRouterParam(event, 'id', { decode: true }) ?? '';
      const version = PLUGIN_VERSION_ID.test(id) ? ctx.tree().catalog.byId.get(id) : undefined;
      if (!version) throw notFound(`No plugin version with id ${JSON.stringify(id)}`, undefined, NOT_FOUND_HEADERS);
      return sendDocument(event, checksumLine(version, algorithm), MEDIA_TYPES.txt, CACHE_CONTROL.versionFile);
    });
  }
  app.get('/by-hash/:algorithm/:hash', (event: H3Event) => {
    const algorithm = getRouterParam(event, 'algorithm', { decode: true }) ?? '';
    const hash = getRouterParam(event, 'hash', { decode: true }) ?? '';
    if (!(HASH_ALGORITHMS as readonly string[]).includes(algorithm))
      throw new HTTPError({
        status: 400,
        message: `algorithm must be one of ${HASH_ALGORITHMS.join(', ')}`,
      });
    const name = algorithm as HashAlgorithm;
    const length = HEX_LENGTH[name];
    if (!HEX[name].test(hash))
      throw new HTTPError({ status: 400, message: `hash must be ${length} hex digits (a ${name} digest)` });
    const catalog = ctx.tree().catalog;
    const version = findByHash(catalog, name, hash);
    if (!version) throw notFound(`No plugin version has ${name} ${hash.toLowerCase()}`, undefined, NOT_FOUND_HEADERS);
    return sendJson(event, { version: presentVersion(catalog, version, false) }, CACHE_CONTROL.latest);
  });
  return app;
}
