import { DOMParser, type Element } from '@xmldom/xmldom';

/** An SVG document's root element; any parse error or warning fails the test. */
export function parseSvg(svg: string): Element {
  const doc = new DOMParser({
    onError: (level, message) => {
      throw new Error(`${level}: ${message}`);
    },
  }).parseFromString(svg, 'image/svg+xml');
  return doc.documentElement as unknown as Element;
}

/** Every `tag` element under `root`, in document order. */
export const all = (root: Element, tag: string) => Array.from(root.getElementsByTagName(tag));

/** The `tag` elements whose class is `cls`. */
export const byClass = (root: Element, tag: string, cls: string) =>
  all(root, tag).filter((e) => e.getAttribute('class') === cls);
