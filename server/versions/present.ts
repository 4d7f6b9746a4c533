import type { Catalog } from './catalog.ts';
import { channelOf } from './channels.ts';
import { isLatestMap } from './latest.ts';
import { supportsMinecraft } from './minecraft.ts';
import type { CatalogVersion, PluginVersion } from './schema.ts';
import { downloadPath } from './paths.ts';

/**
 * SPEC 2.1 on the wire. Adds sha256, sha512, downloadUrl, channel and the changelog (Markdown, when there is
 * one); never drops or renames a SPEC field. createdByUser only in the list (SPEC 2.1: absent in the
 * latest-version response).
 */
export function presentVersion(catalog: Catalog, version: CatalogVersion, withUser: boolean): PluginVersion {
  const user = withUser ? catalog.users.get(version.createdBy) : undefined;
  return {
    id: version.id,
    serverSoftware: version.serverSoftware,
    pluginVersion: version.pluginVersion,
    channel: channelOf(version),
    javaVersion: version.javaVersion,
    ...(version.classFileVersion === undefined ? {} : { classFileVersion: version.classFileVersion }),
    ...(version.minecraftVersion === undefined ? {} : { minecraftVersion: version.minecraftVersion }),
    ...(version.minecraftVersions === undefined ? {} : { minecraftVersions: version.minecraftVersions }),
    proxyVersion: version.proxyVersion ?? null,
    fileName: version.fileName,
    fileSize: version.fileSize,
    sha256: version.sha256,
    sha512: version.sha512,
    downloadUrl: downloadPath(version.id),
    createdAt: version.createdAt,
    updatedAt: version.updatedAt,
    createdBy: version.createdBy,
    ...(user
      ? {
          createdByUser: {
            id: user.id,
            username: user.username,
            ...(user.image === undefined ? {} : { image: user.image }),
            nickname: user.nickname ?? null,
          },
        }
      : {}),
    ...(version.changelog === undefined ? {} : { changelog: version.changelog }),
    ...(version.withdrawn === undefined ? {} : { withdrawn: version.withdrawn }),
    ...declaredFields(version),
    isLatest: isLatestMap(catalog.latest, version),
  };
}

/**
 * SPEC 2.5. lastUpdated is derived from the records, not the clock, so a rebuild gives the same bytes.
 * With `minecraft` (issue 15), only the versions that run on it; lastUpdated stays the catalog's.
 */
export function presentVersionList(catalog: Catalog, minecraft?: string) {
  const lastUpdated = catalog.versions.reduce(
    (max, v) => (v.updatedAt > max ? v.updatedAt : max),
    new Date(0).toISOString(),
  );
  return {
    versions: (minecraft === undefined
      ? catalog.versions
      : catalog.versions.filter((v) => supportsMinecraft(v, minecraft))
    ).map((v) => presentVersion(catalog, v, true)),
    lastUpdated,
  };
}

/** Issue 31: what the JAR's descriptor declared, each field only when the record has it (older records answer as before). */
function declaredFields(version: CatalogVersion) {
  const { foliaSupported, apiVersion, depend, softdepend, descriptorWarnings } = version;
  return {
    ...(foliaSupported === undefined ? {} : { foliaSupported }),
    ...(apiVersion === undefined ? {} : { apiVersion }),
    ...(depend === undefined ? {} : { depend }),
    ...(softdepend === undefined ? {} : { softdepend }),
    ...(descriptorWarnings === undefined ? {} : { descriptorWarnings }),
  };
}
