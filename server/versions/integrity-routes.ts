import { H3, HTTPError, getRouterParam, type H3Event } from 'h3';
import { CACHE_CONTROL, NOT_FOUND_HEADERS } from '../http/cache.ts';
import { notFound } from '../http/errors.ts';
import { sendDocument, sendJson } from '../http/json.ts';
import { MEDIA_TYPES } from '../http/media-types.ts';
import type { Catalog } from './catalog.ts';
import { checksumLine, findByHash } from './integrity.ts';
import { HASH_ALGORITHMS, VERSION_RULES, VERSIONS_ROOT, type HashAlgorithm } from './paths.ts';
import { presentVersion } from './present.ts';
import { PLUGIN_VERSION_ID } from './schema.ts';

/** Hex digits of each algorithm's digest, and the pattern of its hex (any letter case: admins paste what their tool prints). */
const HEX_LENGTH: Record<HashAlgorithm, number> = { sha256: 64, sha512: 128 };
const HEX: Record<HashAlgorithm, RegExp> = { sha256: /^[0-9a-fA-F]{64}$/, sha512: /^[0-9a-fA-F]{128}$/ };

/** What the integrity routes read: only the tree's catalog (digests live in its records). */
export type IntegrityRouteDeps = { tree: () => { catalog: Catalog } };

/** Sidecars and lookup by hash, mounted at /api/plugin-versions beside versionRoutes. */
export function integrityRoutes(ctx: IntegrityRouteDeps): H3 {
  const app = new H3();
  for (const algorithm of HASH_ALGORITHMS) {
    app.get(VERSION_RULES[algorithm].under(VERSIONS_ROOT), (event) => {
      const id = getRouterParam(event, 'id', { decode: true }) ?? '';
      const version = PLUGIN_VERSION_ID.test(id) ? ctx.tree().catalog.byId.get(id) : undefined;
      if (!version) throw notFound(`No plugin version with id ${JSON.stringify(id)}`, undefined, NOT_FOUND_HEADERS);
      return sendDocument(event, checksumLine(version, algorithm), MEDIA_TYPES.txt, CACHE_CONTROL.versionFile);
    });
  }
  app.get(VERSION_RULES.byHash.under(VERSIONS_ROOT), (event: H3Event) => {
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
