import {
  HOST_CONTENT_TYPES,
  extensionOf,
  hostPattern,
  mediaType,
  patternMatcher,
  type StaticFile,
} from './static-layout.ts';

/**
 * Headers a static host sends itself or cannot send per path: its own ETag, Vary, Accept-Ranges
 * and codings; a JAR's digests and Content-Location name one file each.
 */
const HOST_OWN = new Set([
  'etag',
  'vary',
  'accept-ranges',
  'content-length',
  'content-encoding',
  'repr-digest',
  'content-location',
]);

export type HeaderRule = { pattern: string; headers: Record<string, string> };

/**
 * `_headers` rules, one per endpoint or page template: both hosts match a rule against the request's
 * path and give it every matching rule's headers, joining a header two rules set (Cloudflare Pages
 * with a comma). So a rule sets only what is the same for every path it matches, and no header is
 * set by two rules that match one path: rules are taken from the widest (`/api/plugin-versions/:id`
 * also matches `…/feed.atom`) to the narrowest, each setting what is common to its paths and not
 * set for any of them yet. Content-Type comes from the file's extension unless the host's type for
 * it differs from the origin's (`.sha256`). Returns the rules and, per template, what no rule carries.
 */
export function headerRules(files: readonly StaticFile[]) {
  const carried = files.map(carriedHeaders);
  const candidates = candidatePatterns(files).map((pattern) => {
    const matcher = patternMatcher(pattern);
    const matched: number[] = [];
    files.forEach((file, index) => matcher.test(file.path) && matched.push(index));
    return { pattern, matched };
  });
  candidates.sort((a, b) => b.matched.length - a.matched.length || a.pattern.localeCompare(b.pattern));
  const given: (Set<string> | undefined)[] = [];
  const rules: HeaderRule[] = [];
  for (const { pattern, matched } of candidates) {
    const common = commonHeaders(matched.map((index) => carried[index]!));
    for (const index of matched) for (const name of given[index] ?? []) common.delete(name);
    if (!common.size) continue;
    for (const index of matched) for (const name of common.keys()) (given[index] ??= new Set()).add(name);
    rules.push({ pattern, headers: Object.fromEntries([...common].map(([name, value]) => [headerCase(name), value])) });
  }
  return { rules, notCarried: notCarried(files, carried, given) };
}

/**
 * Each template's pattern and, where its last segment is any name, one per extension its paths end
 * with (`/brand/:brand/*.svg`): an SVG's CSP and a PNG's cache time differ within a template.
 */
function candidatePatterns(files: readonly StaticFile[]): string[] {
  const patterns = new Set<string>();
  for (const file of files) {
    const pattern = hostPattern(file.template);
    if (!pattern) continue;
    patterns.add(pattern);
    const extension = extensionOf(file.path);
    const last = pattern.slice(pattern.lastIndexOf('/') + 1);
    const splats = pattern.split('*').length - 1;
    if (extension && (last === '*' || (last.startsWith(':') && splats === 0)))
      patterns.add(`${pattern.slice(0, pattern.lastIndexOf('/') + 1)}*.${extension}`);
  }
  return [...patterns];
}

/** The origin's headers of one answer that a `_headers` rule should carry. */
function carriedHeaders(file: StaticFile): Map<string, string> {
  const carried = new Map<string, string>();
  for (const [name, value] of Object.entries(file.entry.headers)) {
    if (HOST_OWN.has(name)) continue;
    if (name === 'content-type' && HOST_CONTENT_TYPES[extensionOf(file.file)] === mediaType(value)) continue;
    carried.set(name, value);
  }
  return carried;
}

/** The headers every one of `sets` has with one value (each distinct set compared once). */
function commonHeaders(sets: readonly Map<string, string>[]): Map<string, string> {
  const common = new Map(sets[0] ?? []);
  for (const set of new Set(sets)) for (const [name, value] of common) if (set.get(name) !== value) common.delete(name);
  return common;
}

/** Per template, the headers some of its answers carry at the origin but no rule gives them. */
function notCarried(
  files: readonly StaticFile[],
  carried: readonly Map<string, string>[],
  given: readonly (Set<string> | undefined)[],
) {
  const missing = new Map<string, Set<string>>();
  files.forEach((file, index) => {
    for (const name of carried[index]!.keys()) {
      if (given[index]?.has(name)) continue;
      const list = missing.get(file.template) ?? new Set<string>();
      if (!list.size) missing.set(file.template, list);
      list.add(name);
    }
  });
  return missing;
}

/**
 * Header names as HTTP writes them (`Content-Type`): Netlify sends a lowercase `content-type` from
 * `_headers` beside its own instead of replacing it.
 */
const headerCase = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
