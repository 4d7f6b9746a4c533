import { oneOf, pathRule } from '../http/path-rule.ts';
import { PLUGIN_VERSION_ID } from './schema.ts';
import { type ServerSoftware } from './software.ts';
import { JAVA_VERSIONS } from './java.ts';

/**
 * The URLs of SPEC 4.1-4.6 and issue 15 (resolve, integrity, the update check), each written once:
 * routes.ts registers these patterns, the build lists paths with the builders below, and the reuse
 * rules (answer-inputs.ts) and the download counter recognise paths with their matchers.
 */
export const VERSIONS_ROOT = '/api/plugin-versions';

export const HASH_ALGORITHMS = ['sha256', 'sha512'] as const;
export type HashAlgorithm = (typeof HASH_ALGORITHMS)[number];

/** A version's id, as it stands in a path. */
const ID = PLUGIN_VERSION_ID.source.slice(1, -1);
/** The Java versions SPEC 2.3 names: another is a 404, which no rule of these paths covers. */
const JAVA = oneOf(JAVA_VERSIONS);
const software = { java: JAVA } as const;
/**
 * Issue 31: a software's name on the latest routes holds no dot (no SPEC 2.3 name does), so
 * `latest/papermc.txt` is the plain-text answer for PaperMC, never the JSON one of a software
 * named `papermc.txt`, and `latest/papermc/21.txt` never names a Java version `21.txt`.
 */
const NAME = '[^/?.]+';
const named = { software: NAME } as const;
const namedOnJava = { software: NAME, java: JAVA } as const;

export const VERSION_RULES = {
  list: pathRule('/api/plugin-versions'),
  latest: pathRule('/api/plugin-versions/latest/:software', named),
  latestOnJava: pathRule('/api/plugin-versions/latest/:software/:java', namedOnJava),
  /** Issue 31: the latest plugin version alone, as plain text, for updaters that read a version string. */
  latestText: pathRule('/api/plugin-versions/latest/:software.txt', named),
  latestTextOnJava: pathRule('/api/plugin-versions/latest/:software/:java.txt', namedOnJava),
  downloadLatest: pathRule('/api/plugin-versions/download/latest/:software'),
  downloadLatestOnJava: pathRule('/api/plugin-versions/download/latest/:software/:java', software),
  feed: pathRule('/api/plugin-versions/feed.atom'),
  softwareFeed: pathRule('/api/plugin-versions/feed/:software.atom'),
  /** One version's object by id: the id's shape (`plugin-<digits>-...`) is no word of the other rules' first segments. */
  version: pathRule('/api/plugin-versions/:id', { id: ID }),
  download: pathRule('/api/plugin-versions/download/:id', { id: ID }),
  sha256: pathRule('/api/plugin-versions/download/:id.sha256', { id: ID }),
  sha512: pathRule('/api/plugin-versions/download/:id.sha512', { id: ID }),
  byHash: pathRule('/api/plugin-versions/by-hash/:algorithm/:hash', {
    algorithm: oneOf(HASH_ALGORITHMS),
    hash: '[0-9a-fA-F]+',
  }),
  /** Issue 31: Modrinth's `POST /v2/version_files/update` shape (a POST, answered live). */
  byHashUpdate: pathRule('/api/plugin-versions/by-hash/update'),
  resolve: pathRule('/api/plugin-versions/resolve/:software'),
  resolveOnJava: pathRule('/api/plugin-versions/resolve/:software/:java', software),
  downloadResolve: pathRule('/api/plugin-versions/download/resolve/:software'),
  downloadResolveOnJava: pathRule('/api/plugin-versions/download/resolve/:software/:java', software),
  updateCheck: pathRule('/api/plugin-versions/update-check/:software/:java/:current', software),
} as const;

/** The JAR answers a download is counted for: by id, and the latest and resolved ones, which name a software. */
export const JAR_RULES = [
  VERSION_RULES.download,
  VERSION_RULES.downloadLatest,
  VERSION_RULES.downloadLatestOnJava,
  VERSION_RULES.downloadResolve,
  VERSION_RULES.downloadResolveOnJava,
] as const;

/** The Atom feed of every release, or of one software's. */
export function feedPath(software?: ServerSoftware): string {
  return software ? VERSION_RULES.softwareFeed.build({ software: software.toLowerCase() }) : VERSION_RULES.feed.pattern;
}

export const downloadPath = (id: string) => VERSION_RULES.download.build({ id });
export const versionPath = (id: string) => VERSION_RULES.version.build({ id });

/** A software's rules without and with a Java version, by the path's kind. */
const SOFTWARE_RULES = {
  latest: [VERSION_RULES.latest, VERSION_RULES.latestOnJava],
  'download/latest': [VERSION_RULES.downloadLatest, VERSION_RULES.downloadLatestOnJava],
  resolve: [VERSION_RULES.resolve, VERSION_RULES.resolveOnJava],
  'download/resolve': [VERSION_RULES.downloadResolve, VERSION_RULES.downloadResolveOnJava],
} as const;

/** A software's latest metadata (`latest`) or JAR (`download/latest`), on one Java version or any. */
export const latestPath = (kind: 'latest' | 'download/latest', software: string, java?: string) =>
  java === undefined ? SOFTWARE_RULES[kind][0].build({ software }) : SOFTWARE_RULES[kind][1].build({ software, java });

/** Issue 31: a software's latest plugin version as plain text, on one Java version or any. */
export const latestTextPath = (software: string, java?: string) =>
  java === undefined
    ? VERSION_RULES.latestText.build({ software })
    : VERSION_RULES.latestTextOnJava.build({ software, java });

/** Issue 15: `kind` is `resolve` (metadata) or `download/resolve`. */
export const resolvePath = (kind: 'resolve' | 'download/resolve', software: string, java?: string) =>
  java === undefined ? SOFTWARE_RULES[kind][0].build({ software }) : SOFTWARE_RULES[kind][1].build({ software, java });

/** `current` as a plugin sends it: a semantic version's characters (`+` too) need no escaping in a path. */
export const updateCheckPath = (software: string, java: string, current: string) =>
  VERSION_RULES.updateCheck.build({ software, java, current });

export const checksumPath = (id: string, algorithm: HashAlgorithm) => VERSION_RULES[algorithm].build({ id });
export const byHashPath = (algorithm: HashAlgorithm, hex: string) =>
  VERSION_RULES.byHash.build({ algorithm, hash: hex });
