import type { H3, H3Event } from 'h3';
import { CACHE_CONTROL, NOT_FOUND_HEADERS } from '../http/cache.ts';
import { notFound } from '../http/errors.ts';
import { sendJson } from '../http/json.ts';
import { validateNamedParams, validateQuery } from '../http/validate.ts';
import type { Catalog } from './catalog.ts';
import { sendJar, type JarSource } from './jar-answer.ts';
import { presentVersion } from './present.ts';
import { explainNoBuild, resolveBuild, type Resolved, type ServerQuery } from './resolve.ts';
import { ResolveQuery, SoftwarePath } from './schema.ts';
import { VERSION_RULES, VERSIONS_ROOT } from './paths.ts';
import { END_OF_LIFE } from './compat.ts';
import type { ServerSoftware } from './software.ts';

/** What the resolve routes read: the tree's catalog and JARs, and the download counter. */
export type ResolveRouteDeps = JarSource & {
  tree: () => { catalog: Catalog };
};

/**
 * Issue 15: compatible resolution, beside SPEC 4.1-4.6 on the same app: the best build a server
 * runs (resolve.ts), as metadata with `resolvedFrom` or as the JAR.
 */
export function resolveRoutes(app: H3, ctx: ResolveRouteDeps): void {
  const metadata = async (event: H3Event) => {
    const { catalog, resolved, server } = await findResolved(ctx, event);
    const answer = {
      version: presentVersion(catalog, resolved.version, false),
      ...resolutionNotes(resolved, server),
    };
    return sendJson(event, answer, CACHE_CONTROL.latest);
  };
  const download = async (event: H3Event) =>
    sendJar(ctx, event, (await findResolved(ctx, event)).resolved.version, CACHE_CONTROL.latest, true);
  app.get(VERSION_RULES.resolve.under(VERSIONS_ROOT), metadata);
  app.get(VERSION_RULES.resolveOnJava.under(VERSIONS_ROOT), metadata);
  app.get(VERSION_RULES.downloadResolve.under(VERSIONS_ROOT), download);
  app.get(VERSION_RULES.downloadResolveOnJava.under(VERSIONS_ROOT), download);
}

/**
 * As the latest endpoints validate: the query first (400 naming the parameter and the allowed
 * values), then an unknown software or Java version (404 naming what exists), then a 404 saying
 * what would resolve if the server changed one thing.
 */
export async function findResolved(
  ctx: Pick<ResolveRouteDeps, 'tree'>,
  event: H3Event,
): Promise<{ catalog: Catalog; resolved: Resolved; server: ServerSoftware; query: ServerQuery }> {
  const { channel = 'release', minecraft } = await validateQuery(event, ResolveQuery);
  const { software, java } = await validateNamedParams(event, SoftwarePath, NOT_FOUND_HEADERS);
  const { catalog } = ctx.tree();
  const query = { software, java, minecraft, channel };
  const resolved = resolveBuild(catalog.versions, query);
  if (!resolved) throw notFound(explainNoBuild(catalog.versions, query), undefined, NOT_FOUND_HEADERS);
  return { catalog, resolved, server: software, query };
}

/**
 * What a resolve answer and an update check say beside the build: `resolvedFrom`; issue 31's
 * `compatibility: "unverified"` for a Spigot or Bukkit build past Paper's hard fork offered to Paper
 * or a fork, and `endOfLife` for a server whose software was ended (Waterfall); both absent otherwise.
 */
export function resolutionNotes(resolved: Resolved, server: ServerSoftware) {
  const endOfLife = END_OF_LIFE[server];
  return {
    resolvedFrom: { software: resolved.software, java: resolved.version.javaVersion },
    ...(resolved.unverified && { compatibility: 'unverified' as const }),
    ...(endOfLife && { endOfLife }),
  };
}
