import { BADGE_STYLES } from '../../../server/badges/schema.ts';
import type { Catalog } from '../../../server/versions/catalog.ts';
import { pickLatest } from '../../../server/versions/latest.ts';
import { SERVER_SOFTWARE } from '../../../server/versions/software.ts';
import { JAVA_VERSIONS } from '../../../server/versions/java.ts';
import { SERVER_ID_PLACEHOLDER, type BadgeChoice } from './badge-snippets.ts';

// The badges page (issue 17): each badge the API draws for this catalog.

export { BADGE_STYLES };

/** Every badge the catalog has, by kind: the latest per software, per software and Java, downloads, players. */
export function badgeKinds(catalog: Catalog) {
  const slug = (name: string) => name.toLowerCase();
  const released = SERVER_SOFTWARE.filter((software) => pickLatest(catalog.latest, software));
  return {
    latest: released.map((software): BadgeChoice => ({
      label: software,
      path: `/api/badges/latest/${slug(software)}`,
      alt: `Latest ${software} version`,
    })),
    latestJava: released.flatMap((software) =>
      JAVA_VERSIONS.filter((java) => pickLatest(catalog.latest, software, java)).map((java): BadgeChoice => ({
        label: `${software}, Java ${java}`,
        path: `/api/badges/latest/${slug(software)}/${java}`,
        alt: `Latest ${software} version for Java ${java}`,
      })),
    ),
    downloads: [{ label: 'Downloads', path: '/api/badges/downloads', alt: 'Downloads' }] as BadgeChoice[],
    players: [
      { label: 'Players', path: `/api/badges/players/${SERVER_ID_PLACEHOLDER}`, alt: 'Players online' },
    ] as BadgeChoice[],
  };
}
