import type { Catalog } from '../server/versions/catalog.ts';
import { CHANNELS } from '../server/versions/channels.ts';
import { MINECRAFT_NAME } from '../server/versions/minecraft.ts';
import { resolvePath } from '../server/versions/paths.ts';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import { JAVA_VERSIONS } from '../server/versions/java.ts';

/**
 * The Minecraft versions data/ names, each a version a server may ask for: every `minecraftVersion`
 * and each range's ends (a `1.21.x` end names no one version; a 26.x pre-release is one). Sorted,
 * so the paths keep one order.
 */
export function namedMinecraftVersions(catalog: Catalog): string[] {
  const named = new Set<string>();
  for (const version of catalog.versions) {
    if (version.minecraftVersion) named.add(version.minecraftVersion);
    for (const { from, to } of version.minecraftVersions ?? []) named.add(from).add(to);
  }
  return [...named].filter((version) => MINECRAFT_NAME.test(version)).sort();
}

/**
 * A path without a query, with each `?channel=`, and with each `?minecraft=` (release channel): a
 * channel and a Minecraft version together are answered live (precomputing every pair made each
 * release render thousands of answers).
 */
function queryForms(path: string, minecraftVersions: readonly string[]): string[] {
  return [
    path,
    ...CHANNELS.map((channel) => `${path}?channel=${channel}`),
    ...minecraftVersions.map((minecraft) => `${path}?minecraft=${minecraft}`),
  ];
}

/**
 * The finite part of resolution: the list per named Minecraft version, and resolve (metadata and
 * JAR) for every software (its lowercase name) x Java version (and none) x (no query, each channel,
 * each named Minecraft version). Other letter cases, query orders and pairs are answered live, the same bytes.
 */
export function listResolvePaths(catalog: Catalog): string[] {
  const minecraftVersions = namedMinecraftVersions(catalog);
  const paths = minecraftVersions.map((minecraft) => `/api/plugin-versions?minecraft=${minecraft}`);
  for (const software of SERVER_SOFTWARE) {
    const name = software.toLowerCase();
    for (const kind of ['resolve', 'download/resolve'] as const) {
      for (const java of [undefined, ...JAVA_VERSIONS])
        paths.push(...queryForms(resolvePath(kind, name, java), minecraftVersions));
    }
  }
  return paths;
}
