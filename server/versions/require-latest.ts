import { NOT_FOUND_HEADERS } from '../http/cache.ts';
import { notFound } from '../http/errors.ts';
import type { Catalog } from './catalog.ts';
import type { Channel } from './channels.ts';
import { pickLatest } from './latest.ts';
import type { CatalogVersion } from './schema.ts';
import type { ServerSoftware } from './software.ts';
import type { JavaVersion } from './java.ts';

/**
 * The latest version of a software, and Java version when named, on a channel (the latest
 * endpoints, the update check and badges); SPEC's 404 when none matches.
 */
export function requireLatest(
  catalog: Catalog,
  software: ServerSoftware,
  java: JavaVersion | undefined,
  channel: Channel,
): CatalogVersion {
  const version = pickLatest(catalog.latest, software, java, channel);
  if (!version) {
    const name = java ? `${software} on Java ${java}` : software;
    const within = channel === 'release' ? '' : ` in the ${channel} channel`;
    throw notFound(`No plugin version found for ${name}${within}`, undefined, NOT_FOUND_HEADERS);
  }
  return version;
}
