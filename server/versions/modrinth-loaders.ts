import { SERVER_SOFTWARE, SOFTWARE, type ServerSoftware } from './software.ts';

// Issue 31: Modrinth's loader names for our server softwares (SOFTWARE's `modrinthLoaders`): the
// name Modrinth uses first (what the Modrinth-shaped answer says), then the other names a client may send.
const BY_LOADER = new Map<string, ServerSoftware>(
  SERVER_SOFTWARE.flatMap((software) => SOFTWARE[software].modrinthLoaders.map((name) => [name, software] as const)),
);

/** Every loader name accepted, for messages and the OpenAPI document. */
export const LOADER_NAMES = [...BY_LOADER.keys()];

/** The software a loader names, in any letter case (Modrinth's tags are lowercase; plugins send what they like). */
export const softwareOfLoader = (loader: string): ServerSoftware | undefined => BY_LOADER.get(loader.toLowerCase());

/** The loader name the Modrinth-shaped answer gives a software. */
export const loaderOf = (software: ServerSoftware): string => SOFTWARE[software].modrinthLoaders[0];
