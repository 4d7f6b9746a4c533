import { BRANDS, BRAND_NAMES, COMMON_SIZES } from '../server/brands/brands.ts';
import { BRAND_RULES, brandImagePath, brandQueryPath } from '../server/brands/paths.ts';
import { latestBadgePath } from '../server/badges/paths.ts';
import { RASTER_FORMAT_NAMES, type OutputFormat } from '../server/brands/formats.ts';
import { brandKey, type BrandSourceRecord } from '../server/brands/source-record.ts';
import type { Catalog } from '../server/versions/catalog.ts';
import { CHANNELS } from '../server/versions/channels.ts';
import {
  VERSION_RULES,
  downloadPath,
  feedPath,
  latestPath,
  latestTextPath,
  updateCheckPath,
  versionPath,
} from '../server/versions/paths.ts';
import { listIntegrityPaths } from '../server/versions/integrity.ts';
import { pickLatest } from '../server/versions/latest.ts';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import { JAVA_VERSIONS } from '../server/versions/java.ts';
import { listResolvePaths } from './resolve-paths.ts';

/** The default channel's query: a path with it is answered as the path without it. */
const DEFAULT_CHANNEL_QUERY = '?channel=release';

/** The path without `?channel=release`, whose answer is this path's too; undefined for any other path. */
export function defaultChannelTwin(path: string): string | undefined {
  return path.endsWith(DEFAULT_CHANNEL_QUERY) ? path.slice(0, -DEFAULT_CHANNEL_QUERY.length) : undefined;
}

/** A path as asked without a channel and with each `?channel=` (the query form clients write). */
const withChannels = (path: string) => [path, ...CHANNELS.map((channel) => `${path}?channel=${channel}`)];

/**
 * Every finite URL of SPEC 4.1-4.6: the list, latest per software (+ Java) in each channel (JSON,
 * JAR and issue 31's plain text), each
 * version's object and JAR; and the update check of every released version, in each channel (a version the
 * depot never released is compared live); and the latest badges (listLatestBadgePaths).
 */
export function listVersionPaths(catalog: Catalog): string[] {
  const paths = [VERSION_RULES.list.pattern];
  for (const software of SERVER_SOFTWARE) {
    // SPEC 4.1: the dedicated lowercase paths; other letter cases are answered by the origin.
    const name = software.toLowerCase();
    for (const kind of ['latest', 'download/latest'] as const) {
      for (const java of [undefined, ...JAVA_VERSIONS]) paths.push(...withChannels(latestPath(kind, name, java)));
    }
    // Issue 31: the latest plugin version as plain text, as the JSON latest (its 404s too).
    for (const java of [undefined, ...JAVA_VERSIONS]) paths.push(...withChannels(latestTextPath(name, java)));
  }
  paths.push(feedPath(), ...SERVER_SOFTWARE.map((software) => feedPath(software)));
  for (const version of catalog.versions) paths.push(versionPath(version.id), downloadPath(version.id));
  // Each version's .sha256/.sha512 sidecars and its lookups by hash.
  paths.push(...listIntegrityPaths(catalog));
  return [...paths, ...updateCheckPaths(catalog), ...listResolvePaths(catalog), ...listLatestBadgePaths(catalog)];
}

/**
 * Issue 17's latest badges, whose data changes only with a release: per software, and per software
 * and Java version, that has a latest release, its SVG and endpoint JSON in the default style and
 * channel (no query string). PNGs, other styles and channels, and the badges that name no version
 * (404) are answered live.
 */
function listLatestBadgePaths(catalog: Catalog): string[] {
  const paths: string[] = [];
  for (const software of SERVER_SOFTWARE) {
    const name = software.toLowerCase();
    for (const java of [undefined, ...JAVA_VERSIONS]) {
      if (!pickLatest(catalog.latest, software, java)) continue;
      paths.push(latestBadgePath(name, java, 'svg'), latestBadgePath(name, java, 'json'));
    }
  }
  return paths;
}

/** How many plugin versions per software and Java version have their update check precomputed. */
export const PRECOMPUTED_UPDATE_CHECKS = 5;

/**
 * The update checks of the newest PRECOMPUTED_UPDATE_CHECKS plugin versions of each software and
 * Java version, in each channel form: every release changes them all, so precomputing every
 * version's would make each release render about 7 answers per version ever released. Older
 * versions (and unknown ones) are answered live, the same bytes, and cached like the rest.
 */
function updateCheckPaths(catalog: Catalog): Set<string> {
  const checks = new Set<string>();
  const kept = new Map<string, Set<string>>();
  for (const version of catalog.versions) {
    for (const software of version.serverSoftware) {
      const group = `${software}|${version.javaVersion}`;
      const newest = kept.get(group) ?? kept.set(group, new Set()).get(group)!;
      if (newest.size === PRECOMPUTED_UPDATE_CHECKS && !newest.has(version.pluginVersion)) continue;
      newest.add(version.pluginVersion);
      const path = updateCheckPath(software.toLowerCase(), version.javaVersion, version.pluginVersion);
      for (const asked of withChannels(path)) checks.add(asked);
    }
  }
  return checks;
}

/**
 * SPEC 4.7/4.8's finite part: the list, each brand's default image, and per variant the original and
 * every format at the common sizes, as clean links (`/brand/<brand>/<variant>/<size>.<ext>`) and in
 * the query form the site's URL builder writes (`/api/image/brand/<brand>?variant=&size=&format=`,
 * defaults left out, with and without `download=true`), which static servers answer from the map.
 */
export function listBrandPaths(brands: ReadonlyMap<string, BrandSourceRecord>): string[] {
  const paths = [BRAND_RULES.list.pattern, ...BRAND_NAMES.map((brand) => BRAND_RULES.image.build({ brand }))];
  for (const brand of BRAND_NAMES) {
    for (const variant of Object.keys(BRANDS[brand])) {
      const source = brands.get(brandKey(brand, variant))!;
      const formats: readonly OutputFormat[] =
        source.format === 'svg' ? [...RASTER_FORMAT_NAMES, 'svg'] : RASTER_FORMAT_NAMES;
      for (const format of formats) paths.push(brandImagePath(brand, variant, format));
      for (const size of COMMON_SIZES)
        for (const format of formats) paths.push(brandImagePath(brand, variant, format, size));
      for (const size of [undefined, ...COMMON_SIZES]) {
        for (const format of [undefined, ...formats]) {
          const query = new URLSearchParams();
          if (variant !== 'default') query.set('variant', variant);
          if (size !== undefined) query.set('size', String(size));
          if (format !== undefined) query.set('format', format);
          if (query.size > 0) paths.push(brandQueryPath(brand, query));
          query.set('download', 'true');
          paths.push(brandQueryPath(brand, query));
        }
      }
    }
  }
  return paths;
}
