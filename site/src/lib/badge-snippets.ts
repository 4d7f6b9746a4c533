import type { BADGE_STYLES } from '../../../server/badges/schema.ts';

// A badge's URLs and snippets, for the badges page and its script (scripts/badges.ts): the page
// renders them with site-relative URLs, the script again with this site's address and the style picked.

export type BadgeStyle = (typeof BADGE_STYLES)[number];

/** One badge: its path without the format's extension, and the image's alt text. */
export type BadgeChoice = { label: string; path: string; alt: string };

/** The placeholder the players badge's snippets show until a server id is typed. */
export const SERVER_ID_PLACEHOLDER = '<server-id>';

/**
 * A badge's URLs and snippets. `base` is the site's address (location.href in the browser) or
 * undefined for site-relative URLs; the shields.io form needs an absolute URL, so it has none then.
 */
export function badgeSnippets(choice: BadgeChoice, style: BadgeStyle, base: string | undefined) {
  const query = style === 'flat' ? '' : `?style=${style}`;
  const url = (format: 'svg' | 'png' | 'json') => {
    const path = `${choice.path}.${format}`;
    return base
      ? new URL(path, base).href.replace(encodeURIComponent(SERVER_ID_PLACEHOLDER), SERVER_ID_PLACEHOLDER)
      : path;
  };
  const svg = `${url('svg')}${query}`;
  return {
    svg,
    png: `${url('png')}${query}`,
    json: url('json'),
    shields: base
      ? `https://img.shields.io/endpoint?url=${encodeURIComponent(url('json'))}${query ? `&${query.slice(1)}` : ''}`
      : undefined,
    markdown: `![${choice.alt}](${svg})`,
    html: `<img alt="${choice.alt}" src="${svg}">`,
  };
}
