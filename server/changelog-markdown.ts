import rehypeSanitize from 'rehype-sanitize';
import rehypeShiftHeading from 'rehype-shift-heading';
import rehypeStringify from 'rehype-stringify';
import remarkParse from 'remark-parse';
import remarkRehype from 'remark-rehype';
import { unified } from 'unified';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { refuseForbiddenText } from './free-text.ts';
import { escapeXml } from './helpers/escape-xml.ts';

// A changelog's Markdown is text, not a version: a project's description (project/) is written,
// limited and rendered as one, so it lives below both versions/ and project/.

/** What a changelog (data/versions/<id>.md) may hold: a release's notes, not a manual. */
export const CHANGELOG_MAX_BYTES = 64 * 1024;

/**
 * A version's changelog (and a project's description), Markdown; served as written and rendered to
 * sanitised HTML only by changelogHtml. Its render limits (nesting, emphasis) are checked where a
 * changelog is accepted (acceptChangelog), not here: one already in data/ that breaks them is shown
 * as plain text.
 */
export const ChangelogMarkdown = z
  .string()
  .refine((text) => text.trim() !== '', { error: 'is empty; write the notes or remove the file' })
  .refine((text) => Buffer.byteLength(text) <= CHANGELOG_MAX_BYTES, {
    error: `is longer than ${CHANGELOG_MAX_BYTES} bytes`,
  })
  .superRefine(refuseForbiddenText({ kind: 'markdown' }));

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
 * What a changelog may ask of the renderer (issue 27). The parser and the tree walkers recurse once
 * per level of nesting (about 2,500 nested `>` overflowed the stack); emphasis is resolved in time
 * quadratic in the delimiter runs of one paragraph (64 KiB of `**_a` took 29 s), and lists in time
 * quadratic in their nested items (4,000 lines of `- - a`: 5 s). Within these limits the worst
 * 64 KiB changelog we know renders in about a second.
 */
export const CHANGELOG_LIMITS = {
  /** Block quotes and list items opened on one line. */
  nesting: 32,
  /** List items in all: the parser's work grows with the square of a long list's nested items. */
  listItems: 2000,
  /**
   * Paragraphs, block quotes and other blocks in all (lines that start one after a blank line, and
   * quoted lines): rendering grows faster than their count (4,000 short quotes take 4.5 s).
   */
  blocks: 2000,
  /** Open `[` (links and images inside each other) at any point of a paragraph. */
  brackets: 32,
  /** Runs of `*` or `_` in one paragraph. */
  emphasisRuns: 500,
  /** CPU time a changelog may take to render when it is accepted. */
  renderMs: 2000,
} as const;

// A build renders each changelog into every feed that lists it (all, its softwares', each channel
// form) and into the site: about 0.4 ms each, 470 ms of a release at 1,000 versions before this.
const rendered = new LRUCache<string, string>({ max: 2_000 });

/**
 * A changelog as sanitised HTML, for the site and the feed: the one place Markdown becomes HTML.
 * No raw HTML of the Markdown reaches the output; the same Markdown always gives the same string.
 * Markdown beyond CHANGELOG_LIMITS, or whose render fails, is shown as its escaped text: a changelog
 * never fails a page, a feed or a build.
 */
export function changelogHtml(markdown: string): string {
  let html = rendered.get(markdown);
  if (html === undefined) {
    html = changelogLimitProblem(markdown) === undefined ? renderOrUndefined(markdown) : undefined;
    html ??= plainChangelog(markdown);
    rendered.set(markdown, html);
  }
  return html;
}

/** The text as written, escaped: what a changelog that cannot be rendered shows. */
function plainChangelog(markdown: string): string {
  return `<pre>${escapeXml(markdown)}</pre>`;
}

function renderOrUndefined(markdown: string): string | undefined {
  try {
    return String(processor.processSync(markdown));
  } catch {
    return undefined;
  }
}

/**
 * Where a changelog is accepted (`depot release --changelog`, later the HTTP API): the first reason
 * it cannot be, or undefined. Within the limits it is rendered once, timed with `cpuMs` (a clock of
 * the process's CPU time in milliseconds, so other load on the machine does not count), and refused
 * when the render fails or takes over CHANGELOG_LIMITS.renderMs. Its HTML is kept for the build.
 */
export function acceptChangelog(markdown: string, cpuMs: () => number): string | undefined {
  const problem = changelogLimitProblem(markdown);
  if (problem) return problem;
  const started = cpuMs();
  let html: string;
  try {
    html = String(processor.processSync(markdown));
  } catch (error) {
    return `cannot be rendered (${(error as Error).message})`;
  }
  const took = Math.round(cpuMs() - started);
  if (took > CHANGELOG_LIMITS.renderMs)
    return `took ${took} ms to render; a changelog renders in at most ${CHANGELOG_LIMITS.renderMs} ms`;
  rendered.set(markdown, html);
  return undefined;
}

/** A line that starts a list item (up to 3 spaces, after any `>`): it always starts a new paragraph. */
/** A line inside a block quote. */
const QUOTED = /^[ \t]*>/;
const STARTS_ITEM = /^(?: {0,3}> ?)* {0,3}(?:[-+*]|1[.)])[ \t]+\S/;
/** A thematic break (`- - -`, `***`): its markers open no list. */
const THEMATIC_BREAK = /^([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
/** A list marker and what follows it: a space, a tab or the end of the line. */
const LIST_MARKER = /(?:[-+*]|\d{1,9}[.)])(?=[ \t]|$)/y;

/**
 * The first of CHANGELOG_LIMITS that `markdown` breaks, as a sentence naming the line; undefined
 * when it keeps them. One pass, no parsing: it counts more than the parser would build (every `>`
 * and list marker at a line's start, every `[`, every run of `*` or `_` until a blank line or a list
 * item), never less, so what it lets through renders within the limits.
 */
export function changelogLimitProblem(markdown: string): string | undefined {
  const lines = markdown.split(/\r\n|\r|\n/);
  let paragraphStart = 0;
  let emphasisRuns = 0;
  let openBrackets = 0;
  let listItems = 0;
  let blocks = 0;
  let previousBlank = true;
  for (const [index, line] of lines.entries()) {
    const blank = line.trim() === '';
    if (!blank && (previousBlank || QUOTED.test(line)) && ++blocks > CHANGELOG_LIMITS.blocks)
      return `line ${index + 1} starts block ${blocks}; a changelog has at most ${CHANGELOG_LIMITS.blocks} paragraphs, quotes and other blocks`;
    previousBlank = blank;
    const { depth, items } = containers(line, CHANGELOG_LIMITS.nesting);
    if (depth > CHANGELOG_LIMITS.nesting)
      return `line ${index + 1} nests more than ${CHANGELOG_LIMITS.nesting} block quotes and list items`;
    if ((listItems += items) > CHANGELOG_LIMITS.listItems)
      return `line ${index + 1} starts list item ${listItems}; a changelog has at most ${CHANGELOG_LIMITS.listItems}`;
    if (line.trim() === '') [paragraphStart, emphasisRuns, openBrackets] = [index + 1, 0, 0];
    else if (STARTS_ITEM.test(line)) [paragraphStart, emphasisRuns, openBrackets] = [index, 0, 0];
    let previous = '';
    for (const char of line) {
      if ((char === '*' || char === '_') && char !== previous) emphasisRuns++;
      else if (char === '[') openBrackets++;
      else if (char === ']' && openBrackets > 0) openBrackets--;
      previous = char;
      if (emphasisRuns > CHANGELOG_LIMITS.emphasisRuns)
        return `the paragraph from line ${paragraphStart + 1} has more than ${CHANGELOG_LIMITS.emphasisRuns} runs of * or _; separate it into paragraphs with blank lines`;
      if (openBrackets > CHANGELOG_LIMITS.brackets)
        return `line ${index + 1} opens more than ${CHANGELOG_LIMITS.brackets} [ brackets inside each other`;
    }
  }
  return undefined;
}

/**
 * Block quotes and list markers at the start of `line`, and the list items above whose content its
 * indentation reaches (`depth`, counted up to one more than `cap`), and of them the list markers on
 * the line (`items`), as the parser could open them. A thematic break where the
 * first marker stands (`- - -`) opens no list.
 */
function containers(line: string, cap: number): { depth: number; items: number } {
  let depth = 0;
  let items = 0;
  let columns = 0;
  for (let at = 0; at < line.length && depth + Math.floor(columns / 2) <= cap;) {
    const char = line[at]!;
    // A line stays inside the list items of the lines above only when indented to their content,
    // at least 2 columns per item: so 2 columns of leading indentation may stand for one container.
    if (char === ' ' || char === '\t') [columns, at] = [columns + (depth === 0 ? (char === '\t' ? 4 : 1) : 0), at + 1];
    else if (char === '>') [depth, at] = [depth + 1, at + 1];
    else {
      LIST_MARKER.lastIndex = at;
      const marker = LIST_MARKER.exec(line);
      if (!marker || (items === 0 && THEMATIC_BREAK.test(line.slice(at)))) break;
      [depth, items, at] = [depth + 1, items + 1, at + marker[0].length];
    }
  }
  return { depth: depth + Math.floor(columns / 2), items };
}
