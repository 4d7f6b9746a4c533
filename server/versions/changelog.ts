import rehypeSanitize from 'rehype-sanitize';
import rehypeShiftHeading from 'rehype-shift-heading';
import rehypeStringify from 'rehype-stringify';
import remarkParse from 'remark-parse';
import remarkRehype from 'remark-rehype';
import { unified } from 'unified';
import { LRUCache } from 'lru-cache';

// Markdown -> mdast -> hast -> HTML. remark-rehype drops raw HTML (allowDangerousHtml is off), and
// rehype-sanitize's default schema (GitHub's) then removes what Markdown itself can produce that a
// page must not run: javascript: links, event handler attributes, unknown elements.
// One heading level down: a changelog's `## 1.4.0` becomes an h3 under a page's "Changes" (h2).
const processor = unified()
  .use(remarkParse)
  .use(remarkRehype)
  .use(rehypeSanitize)
  .use(rehypeShiftHeading, { shift: 1 })
  .use(rehypeStringify)
  .freeze();

// A build renders each changelog into every feed that lists it (all, its softwares', each channel
// form) and into the site: about 0.4 ms each, 470 ms of a release at 1,000 versions before this.
const rendered = new LRUCache<string, string>({ max: 2_000 });

/**
 * A changelog as sanitised HTML, for the site and the feed: the one place Markdown becomes HTML.
 * No raw HTML of the Markdown reaches the output; the same Markdown always gives the same string.
 */
export function changelogHtml(markdown: string): string {
  let html = rendered.get(markdown);
  if (html === undefined) rendered.set(markdown, (html = String(processor.processSync(markdown))));
  return html;
}
