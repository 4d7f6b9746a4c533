import type { RouteEntry } from '../server/tree/format.ts';
import { OPENAPI_PATHS } from '../server/openapi.ts';
import { PAGE_RULES } from '../server/page-paths.ts';

/**
 * The static hosts' layout (docs/deployment.md, Static hosts): every precomputed 200 answer without
 * a query string is a file at a path derived from its URL by one fixed rule, and the hosts' fixed
 * rules (`_redirects`, `_headers`) are made per endpoint template, never per path, so their number
 * does not grow with the catalog.
 */

/** What these hosts send as Content-Type for a file's extension (their MIME tables agree on these). */
export const HOST_CONTENT_TYPES: Readonly<Record<string, string>> = {
  json: 'application/json',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  atom: 'application/atom+xml',
  txt: 'text/plain',
  html: 'text/html',
  css: 'text/css',
  js: 'text/javascript',
  jar: 'application/java-archive',
};
const EXTENSION_BY_TYPE = new Map(Object.entries(HOST_CONTENT_TYPES).map(([ext, type]) => [type, ext]));

/** A Content-Type without its parameters, lowercase: what the hosts' tables and ours compare. */
export const mediaType = (contentType: string) => contentType.split(';')[0]!.trim().toLowerCase();

/** The extension a file name ends with (after its last dot in the last segment), or ''. */
export function extensionOf(path: string): string {
  const segment = path.slice(path.lastIndexOf('/') + 1);
  const dot = segment.lastIndexOf('.');
  return dot > 0 ? segment.slice(dot + 1).toLowerCase() : '';
}

/**
 * The fixed rule: a URL whose last segment has an extension is a file at its own path; any other is
 * its path plus the extension of its content type (`/api/plugin-versions/latest/papermc` is
 * `…/papermc.json`, beside the folder `papermc/`; a page `/versions` is `versions.html`, which the
 * hosts serve at the clean path themselves); `/` is `index.html`. Undefined: no file (a path with
 * `%`, `..` or an empty segment, or a content type without an extension), left to the origin.
 */
function staticFilePath(path: string, contentType: string | undefined): string | undefined {
  if (path === '/') return '/index.html';
  if (!path.startsWith('/') || /%|\/\/|\/\.\.?(\/|$)|\/$/.test(path)) return undefined;
  if (extensionOf(path)) return path;
  const extension = EXTENSION_BY_TYPE.get(mediaType(contentType ?? ''));
  return extension ? `${path}.${extension}` : undefined;
}

type TemplateNode = {
  template?: string;
  literal: Map<string, TemplateNode>;
  /** Segments that mix a parameter with text (`{id}.sha256`), tried before a whole parameter. */
  mixed: { test: RegExp; node: TemplateNode }[];
  param?: TemplateNode;
};
const node = (): TemplateNode => ({ literal: new Map(), mixed: [] });

/**
 * The endpoint and page templates in a tree of segments, matched as the origin's router does (a
 * literal segment before a parameter): looking a path up costs its segments, not the templates.
 */
function templateTree(): TemplateNode {
  const root = node();
  const pages = Object.values(PAGE_RULES).map((rule) => rule.pattern.replace(/:(\w+)/g, '{$1}'));
  // A history's older pages (historyArchivePath): without their templates each would be a rule of its own.
  const archives = [PAGE_RULES.history, PAGE_RULES.filteredHistory].map(
    (rule) => `${rule.pattern.replace(/:(\w+)/g, '{$1}')}/page/{page}`,
  );
  for (const template of [...Object.keys(OPENAPI_PATHS), ...pages, ...archives]) {
    let at = root;
    for (const segment of template.split('/').slice(1)) {
      if (/^\{\w+\}$/.test(segment)) at = at.param ??= node();
      else if (segment.includes('{')) {
        const source = segment
          .split(/\{\w+\}/)
          .map(escapeRegex)
          .join('[^/]+');
        const mixed = { test: new RegExp(`^${source}$`), node: node() };
        at.mixed.push(mixed);
        at = mixed.node;
      } else at = at.literal.get(segment) ?? (at.literal.set(segment, node()), at.literal.get(segment)!);
    }
    at.template ??= template;
  }
  return root;
}

function findTemplate(at: TemplateNode, segments: readonly string[], index: number): string | undefined {
  if (index === segments.length) return at.template;
  const segment = segments[index]!;
  const literal = at.literal.get(segment);
  const found = literal && findTemplate(literal, segments, index + 1);
  if (found) return found;
  for (const mixed of at.mixed) {
    const below = mixed.test.test(segment) && findTemplate(mixed.node, segments, index + 1);
    if (below) return below;
  }
  return at.param && segment ? findTemplate(at.param, segments, index + 1) : undefined;
}

/** A function naming the endpoint or page template (`{param}` segments) of a path, or the path itself. */
function templateFinder(): (path: string) => string {
  const root = templateTree();
  return (path) => findTemplate(root, path.split('/').slice(1), 0) ?? path;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A template as these hosts' rule pattern: a whole-segment parameter is a `:placeholder` (one
 * segment), a segment that mixes a parameter with text (`{id}.sha256`, `{software}.{format}`) a
 * splat (`*.sha256`, `*`): Netlify reads placeholders as whole segments only, Cloudflare Pages
 * allows one splat per pattern. Undefined when a template would need two splats.
 */
export function hostPattern(template: string): string | undefined {
  let splats = 0;
  const segments = template.split('/').map((segment) => {
    const whole = /^\{(\w+)\}$/.exec(segment);
    if (whole) return `:${whole[1]}`;
    if (!segment.includes('{')) return segment;
    splats++;
    const suffix = /^\{\w+\}([^{}]*)$/.exec(segment);
    const prefix = /^([^{}]*)\{\w+\}$/.exec(segment);
    return suffix ? `*${suffix[1]}` : prefix ? `${prefix[1]}*` : '*';
  });
  return splats > 1 ? undefined : segments.join('/');
}

/**
 * A rule pattern as the hosts match it against a request's path (the subset both document and we
 * use): a placeholder is one segment (`[^/]+`), the splat anything (`.*`), the rest literal.
 */
export function patternMatcher(pattern: string): { prefix: string; test: (path: string) => boolean } {
  const firstVariable = pattern.search(/[:*]/);
  const prefix = firstVariable < 0 ? pattern : pattern.slice(0, firstVariable);
  if (firstVariable < 0) return { prefix, test: (path) => path === pattern };
  const source = pattern
    .split(/(:[A-Za-z]\w*|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : escapeRegex(part)))
    .join('');
  const regex = new RegExp(`^${source}$`);
  return { prefix, test: (path) => path.startsWith(prefix) && regex.test(path) };
}

/** One precomputed answer the layout holds: its URL path, file in the layout, template and entry. */
export type StaticFile = { path: string; file: string; template: string; entry: RouteEntry };

/**
 * The layout's files, in the manifest's order, and the paths it leaves to the origin (no file by
 * the rule, or a file that would clash with another's folder or name).
 */
export function staticFiles(routes: Record<string, RouteEntry>): { files: StaticFile[]; skipped: string[] } {
  const files: StaticFile[] = [];
  const skipped: string[] = [];
  const taken = new Set<string>();
  const folders = new Set<string>();
  const routeTemplate = templateFinder();
  for (const path in routes) {
    const entry = routes[path]!;
    if (entry.status !== 200 || path.includes('?')) continue;
    const file = staticFilePath(path, entry.headers['content-type']);
    if (!file || taken.has(file) || folders.has(file)) {
      skipped.push(path);
      continue;
    }
    taken.add(file);
    // Its folders, from the nearest up, until one is known (with all above it).
    for (let slash = file.lastIndexOf('/'); slash > 0; slash = file.lastIndexOf('/', slash - 1)) {
      const folder = file.slice(0, slash);
      if (folders.has(folder)) break;
      folders.add(folder);
    }
    files.push({ path, file, template: routeTemplate(path), entry });
  }
  // A file named as another's folder was taken before that folder was seen: both cannot be.
  const clashing = new Set(files.filter((f) => folders.has(f.file)).map((f) => f.path));
  return { files: files.filter((f) => !clashing.has(f.path)), skipped: [...skipped, ...clashing] };
}
