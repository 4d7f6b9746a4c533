import type { ServerSoftware } from './software.ts';

/**
 * Issue 31: Modrinth's loader names for our server softwares, the name Modrinth uses first (what the
 * Modrinth-shaped answer says), then the other names a client may send (our own, lowercase).
 * LeafMC and CanvasMC have no Modrinth loader: their own names stand in.
 */
const MODRINTH_LOADERS: Readonly<Record<ServerSoftware, readonly string[]>> = {
  PaperMC: ['paper', 'papermc'],
  Spigot: ['spigot'],
  Bukkit: ['bukkit'],
  Purpur: ['purpur'],
  Quilt: ['quilt'],
  LeafMC: ['leafmc'],
  Folia: ['folia'],
  CanvasMC: ['canvasmc'],
  BungeeCord: ['bungeecord'],
  Waterfall: ['waterfall'],
  Velocity: ['velocity'],
};

const BY_LOADER = new Map<string, ServerSoftware>(
  Object.entries(MODRINTH_LOADERS).flatMap(([software, names]) =>
    names.map((name) => [name, software as ServerSoftware] as const),
  ),
);

/** Every loader name accepted, for messages and the OpenAPI document. */
export const LOADER_NAMES = [...BY_LOADER.keys()];

/** The software a loader names, in any letter case (Modrinth's tags are lowercase; plugins send what they like). */
export const softwareOfLoader = (loader: string): ServerSoftware | undefined => BY_LOADER.get(loader.toLowerCase());

/** The loader name the Modrinth-shaped answer gives a software. */
export const loaderOf = (software: ServerSoftware): string => MODRINTH_LOADERS[software][0]!;
