import type { H3Event } from 'h3';
import { PUBLIC_HEADERS } from '../http/cache.ts';
import { dispositionHeader } from '../http/disposition.ts';
import { sendRepresentation } from '../http/send.ts';
import { JAR_EXPOSED_HEADERS, integrityHeaders } from './integrity.ts';
import type { CatalogVersion } from './schema.ts';

/**
 * What a JAR answer reads: where a JAR's bytes are in the tree being served (the tree's layout is
 * the tree's to know, so the path comes in), and the counter that counts it.
 */
export type JarSource = {
  jarFile: (sha256: string) => string;
  downloads: { countJar: (event: H3Event, versionId: string) => void };
};

/**
 * A JAR answer, by id, latest or resolve; `latest` (and resolve) ones also name the immutable copy
 * they are (Content-Location). `extra` comes last: a withdrawn version's download adds its own
 * headers and exposes them (withdrawalHeaders).
 */
export function sendJar(
  ctx: JarSource,
  event: H3Event,
  version: CatalogVersion,
  cacheControl: string,
  latest: boolean,
  extra: Record<string, string> = {},
) {
  ctx.downloads.countJar(event, version.id);
  return sendRepresentation(event, {
    status: 200,
    headers: {
      'content-type': 'application/java-archive',
      'content-disposition': dispositionHeader('attachment', version.fileName),
      'cache-control': cacheControl,
      etag: `"${version.sha256}"`,
      'accept-ranges': 'bytes',
      ...PUBLIC_HEADERS,
      'access-control-expose-headers': JAR_EXPOSED_HEADERS,
      ...integrityHeaders(version, latest),
      ...extra,
    },
    size: version.fileSize,
    body: { path: ctx.jarFile(version.sha256) },
  });
}
