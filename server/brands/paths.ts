import { pathRule } from '../http/path-rule.ts';

/**
 * SPEC 4.7/4.8's URLs and the clean static links (`/brand/<brand>/<variant>/<size>.<ext>`), each
 * written once. A file segment is one parameter: the route reads it whole and answers a 404 that
 * says what it expects.
 */
export const BRAND_LINKS_ROOT = '/brand/';

export const BRAND_RULES = {
  list: pathRule('/api/image/brand'),
  image: pathRule('/api/image/brand/:brand'),
  sizedLink: pathRule('/brand/:brand/:variant/:file'),
  variantLink: pathRule('/brand/:brand/:file'),
} as const;

/** The clean static link of an image, also the manifest key the query form is answered from. */
export function brandImagePath(brand: string, variant: string, format: string, size?: number): string {
  return size === undefined
    ? BRAND_RULES.variantLink.build({ brand, file: `${variant}.${format}` })
    : BRAND_RULES.sizedLink.build({ brand, variant, file: `${size}.${format}` });
}

/** SPEC 4.7's query form of an image (the site's URL builder writes it; static servers answer it from the map). */
export const brandQueryPath = (brand: string, query: URLSearchParams) =>
  `${BRAND_RULES.image.build({ brand })}?${query}`;
