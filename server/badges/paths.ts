import { oneOf, pathRule } from '../http/path-rule.ts';
import { JAVA_VERSIONS } from '../versions/java.ts';
import { BADGE_FORMATS } from './schema.ts';

/** Issue 17's badge URLs, each written once: the format is the path's extension. */
const format = oneOf(BADGE_FORMATS);

export const BADGE_RULES = {
  latest: pathRule('/api/badges/latest/:serverSoftware.:format', { format }),
  latestOnJava: pathRule('/api/badges/latest/:serverSoftware/:javaVersion.:format', {
    javaVersion: oneOf(JAVA_VERSIONS),
    format,
  }),
  downloads: pathRule('/api/badges/downloads.:format', { format }),
  // A server's id is a UUID (any letter case): no dot, so the format is what follows the one there is.
  players: pathRule('/api/badges/players/:id.:format', { id: '[0-9A-Za-z-]+', format }),
} as const;

/** A software's latest badge (lowercase name), on one Java version or any. */
export const latestBadgePath = (software: string, java: string | undefined, badgeFormat: 'svg' | 'json' | 'png') =>
  java === undefined
    ? BADGE_RULES.latest.build({ serverSoftware: software, format: badgeFormat })
    : BADGE_RULES.latestOnJava.build({ serverSoftware: software, javaVersion: java, format: badgeFormat });
