import rehypeSanitize from 'rehype-sanitize';
import rehypeShiftHeading from 'rehype-shift-heading';
import rehypeStringify from 'rehype-stringify';
import remarkParse from 'remark-parse';
import remarkRehype from 'remark-rehype';
import { unified } from 'unified';

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

/**
 * A changelog as sanitised HTML, for the site and the feed: the one place Markdown becomes HTML.
 * No raw HTML of the Markdown reaches the output; the same Markdown always gives the same string.
 */
export function changelogHtml(markdown: string): string {
  return String(processor.processSync(markdown));
}
