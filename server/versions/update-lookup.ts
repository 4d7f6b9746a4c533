import type { Catalog } from './catalog.ts';
import { CHANNELS, channelOf, versionLabel, type Channel } from './channels.ts';
import { findByHash } from './integrity.ts';
import { compareNewestFirst } from './latest.ts';
import { guaranteedJavaOf } from './minecraft-java.ts';
import { loaderOf, softwareOfLoader } from './modrinth-loaders.ts';
import { downloadPath } from './paths.ts';
import { resolveBuild } from './resolve.ts';
import type { CatalogVersion } from './schema.ts';
import { isProxy, type ServerSoftware } from './software.ts';
import type { JavaVersion } from './java.ts';
import type { ModrinthVersion, UpdateLookupBody } from './update-lookup-schema.ts';

/** This depot serves one plugin: the project every Modrinth-shaped version belongs to. */
const PROJECT_ID = 'depot';

/**
 * Issue 31, Modrinth's `version_files/update`: per hash of one of our JARs, the build its server
 * should run, as a Modrinth version object; hashes of no JAR of ours, or with no build for the
 * server, are left out (as Modrinth leaves them out). The server is read from the request and the
 * JAR it runs: its softwares are `loaders` (else the JAR's), its Java the higher of the JAR's
 * (the server runs it) and the one every server of the game version runs (issue 39; a newer
 * Java's build might not start), its channel the least stable of `version_types` (else the JAR's own).
 */
export function findUpdates(
  catalog: Catalog,
  body: UpdateLookupBody,
  publicUrl: string,
): Record<string, ModrinthVersion> {
  const answer: Record<string, ModrinthVersion> = {};
  // The build depends on a JAR only through its Java, channel and softwares: a thousand hashes
  // of the same few JARs resolve a few times.
  const resolved = new Map<string, CatalogVersion | undefined>();
  const asked = asChannel(body.version_types);
  for (const hash of body.hashes) {
    const current = findByHash(catalog, body.algorithm, hash);
    if (!current) continue;
    const softwares = body.loaders?.length ? loaderSoftwares(body.loaders) : current.serverSoftware;
    const server = { softwares, java: current.javaVersion, channel: asked ?? channelOf(current) };
    const key = `${server.java}|${server.channel}|${softwares.join(',')}`;
    if (!resolved.has(key)) resolved.set(key, newestBuild(catalog.versions, server, body.game_versions ?? []));
    const update = resolved.get(key);
    if (update) answer[hash] = presentModrinthVersion(update, publicUrl);
  }
  return answer;
}

/** The least stable channel listed (Modrinth's `version_types`), or undefined when none is. */
function asChannel(types: readonly Channel[] | undefined): Channel | undefined {
  if (!types?.length) return undefined;
  return CHANNELS[Math.max(...types.map((type) => CHANNELS.indexOf(type)))];
}

/** Loader names as softwares, in the order sent, each once (the schema has checked each names one). */
function loaderSoftwares(loaders: readonly string[]): ServerSoftware[] {
  return [...new Set(loaders.map((loader) => softwareOfLoader(loader)!))];
}

type Server = { softwares: readonly ServerSoftware[]; java: CatalogVersion['javaVersion']; channel: Channel };

/**
 * The first software (in the order given) that resolves (resolve.ts: its own builds, then those
 * of the softwares it runs) gives the build: the newest of those resolved for each Minecraft
 * version (any of them supported), or for none when the list is empty.
 */
function newestBuild(
  newestFirst: readonly CatalogVersion[],
  server: Server,
  minecraftVersions: readonly string[],
): CatalogVersion | undefined {
  const asked = minecraftVersions.length ? [...new Set(minecraftVersions)] : [undefined];
  for (const software of server.softwares) {
    const found = asked
      .map((minecraft) =>
        resolveBuild(newestFirst, {
          software,
          java: javaFor(server, software, minecraft),
          minecraft,
          channel: server.channel,
        }),
      )
      .flatMap((resolved) => (resolved ? [resolved.version] : []))
      .sort(compareNewestFirst);
    if (found[0]) return found[0];
  }
  return undefined;
}

/**
 * Issue 39: the server runs the installed JAR's Java, and at least what every server of the game
 * version runs: one that moved to 26.1 from a Java 21 JAR runs Java 25, and is offered its builds.
 * A proxy's Java is its own, whatever its game servers run.
 */
function javaFor(server: Server, software: ServerSoftware, minecraft: string | undefined): JavaVersion {
  const guaranteed = minecraft === undefined || isProxy(software) ? server.java : guaranteedJavaOf(minecraft);
  return Number(guaranteed) > Number(server.java) ? guaranteed : server.java;
}

/** The Minecraft versions a build names, as Modrinth lists game versions. */
function gameVersionsOf(version: CatalogVersion): string[] {
  if (version.minecraftVersions) return [...new Set(version.minecraftVersions.flatMap(({ from, to }) => [from, to]))];
  return version.minecraftVersion === undefined ? [] : [version.minecraftVersion];
}

/** A version as Modrinth's API answers one: the fields its clients read, from the record. */
function presentModrinthVersion(version: CatalogVersion, publicUrl: string): ModrinthVersion {
  return {
    id: version.id,
    project_id: PROJECT_ID,
    author_id: version.createdBy,
    name: versionLabel(version),
    version_number: version.pluginVersion,
    version_type: channelOf(version),
    changelog: version.changelog ?? null,
    changelog_url: null,
    dependencies: [],
    game_versions: gameVersionsOf(version),
    loaders: version.serverSoftware.map(loaderOf),
    featured: false,
    status: 'listed',
    requested_status: null,
    date_published: version.createdAt,
    downloads: 0,
    files: [
      {
        hashes: { sha256: version.sha256, sha512: version.sha512 },
        url: new URL(downloadPath(version.id), publicUrl).href,
        filename: version.fileName,
        primary: true,
        size: version.fileSize,
        file_type: null,
      },
    ],
  };
}
