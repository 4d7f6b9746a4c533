import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RouteEntry } from '../server/tree/format.ts';
import { NOT_FOUND_PAGE } from '../server/tree/format.ts';
import { HISTORY_SEGMENTS, OTHER_ENDPOINT_PATHS, canonicalPagePath } from '../server/pages.ts';
import { ENDPOINT_PREFIXES } from '../server/page-paths.ts';
import { refuseControl } from './config-line.ts';
import { extensionOf, hostPattern, patternMatcher, staticFiles, type StaticFile } from './static-layout.ts';
import { headerRules, type HeaderRule } from './static-headers.ts';

/** Cloudflare Pages' caps (docs/deployment.md): `_redirects` 2,000 static and 100 dynamic rules, `_headers` 100 rules. */
export const CLOUDFLARE_PAGES_CAPS = { staticRedirects: 2000, dynamicRedirects: 100, headers: 100 } as const;

/**
 * Templates whose answers the build precomputes for a few parameters only: a rewrite would turn the
 * rest, which the origin answers live, into the host's 404. They stay with the origin.
 */
const LIVE_TEMPLATES = new Set(['/api/plugin-versions/update-check/{serverSoftware}/{javaVersion}/{current}']);

export type RuleCounts = { redirects: number; staticRedirects: number; dynamicRedirects: number; headers: number };

/**
 * `_redirects` and `_headers` for the static layout (static-layout.ts), made per endpoint template,
 * so their number does not grow with versions. `_redirects`: static rules, then dynamic ones
 * (Cloudflare Pages counts them apart and wants them in this order; both hosts apply the first that
 * matches): extensionless paths rewritten to their file (`/api/plugin-versions/:id
 * /api/plugin-versions/:id.json 200`), before them the paths at their own file that such a rewrite
 * would catch on Cloudflare Pages (which applies rules even where a file exists, where Netlify
 * serves the file), then the origin. `_headers`: static-headers.ts.
 */
export function staticLayoutConfigs(routes: Record<string, RouteEntry>, originUrl: string) {
  const { files, skipped } = staticFiles(routes);
  const rewrites = rewriteRules(files);
  const origin = originUrl.replace(/\/$/, '');
  const staticLines = [...rewrites.exact];
  const dynamicLines = [...rewrites.identity, ...rewrites.placeholders];
  if (routes[NOT_FOUND_PAGE]) {
    for (const segment of HISTORY_SEGMENTS) {
      const path = `/versions/${segment}`;
      staticLines.push(`${path} ${canonicalPagePath(path)} 301`);
      const below = canonicalPagePath(`${path}/:splat`);
      if (below) dynamicLines.push(`${path}/* ${below} 301`);
    }
    for (const path of OTHER_ENDPOINT_PATHS) staticLines.push(`${path} ${origin}${path} 200`);
    for (const prefix of ENDPOINT_PREFIXES) dynamicLines.push(`${prefix}* ${origin}${prefix}:splat 200`);
  } else dynamicLines.push(`/* ${origin}/:splat 200`);
  // Cloudflare Pages counts a rule with a placeholder or splat as dynamic, wherever it stands.
  const lines = [...staticLines, ...dynamicLines];
  for (const line of lines) refuseControl(line);
  staticLines.splice(0, Infinity, ...lines.filter((line) => !isDynamic(line)));
  dynamicLines.splice(0, Infinity, ...lines.filter(isDynamic));
  const headers = headerRules(files);
  const counts: RuleCounts = {
    redirects: staticLines.length + dynamicLines.length,
    staticRedirects: staticLines.length,
    dynamicRedirects: dynamicLines.length,
    headers: headers.rules.length,
  };
  const redirects = [
    '# plugin depot: written by `npm run depot -- export-static` for its layout: answers from files,',
    '# everything else from the origin. One rule per endpoint, not per path.',
    ...staticLines,
    ...dynamicLines,
    '',
  ].join('\n');
  return { redirects, headers: headersText(headers.rules), counts, skipped, notCarried: headers.notCarried, files };
}

const isDynamic = (line: string) => /[:*]/.test(line.split(' ')[0]!);

/**
 * The rewrites of extensionless paths to their files: one placeholder rule per template whose
 * files share an extension, an exact rule per path where they do not (brand images by name: PNG or
 * SVG, one per brand), and identity rules for templates at their own files that a rewrite catches.
 */
function rewriteRules(files: readonly StaticFile[]) {
  const byTemplate = new Map<string, StaticFile[]>();
  for (const file of files) {
    if (file.file === file.path || extensionOf(file.path) || LIVE_TEMPLATES.has(file.template)) continue;
    // Pages: the hosts serve `<path>.html` (and `/index.html`) at the clean path themselves.
    if (extensionOf(file.file) === 'html') continue;
    const list = byTemplate.get(file.template) ?? [];
    if (!list.length) byTemplate.set(file.template, list);
    list.push(file);
  }
  const exact: string[] = [];
  const placeholders: string[] = [];
  for (const [template, members] of byTemplate) {
    const extensions = new Set(members.map((member) => extensionOf(member.file)));
    const pattern = hostPattern(template);
    if (extensions.size === 1 && pattern && template.includes('{'))
      placeholders.push(`${pattern} ${pattern}.${[...extensions][0]} 200`);
    else for (const member of members) exact.push(`${member.path} ${member.file} 200`);
  }
  return { exact, placeholders, identity: identityRules(files, placeholders) };
}

/** Templates at their own files that a placeholder rewrite catches: a rule serving each as itself, first. */
function identityRules(files: readonly StaticFile[], placeholders: readonly string[]): string[] {
  const matchers = placeholders.map((line) => patternMatcher(line.split(' ')[0]!));
  const rewritten = files.filter((file) => file.file !== file.path);
  const caught = new Set<string>();
  for (const file of files)
    if (file.file === file.path && matchers.some((matcher) => matcher.test(file.path))) caught.add(file.template);
  const lines: string[] = [];
  for (const template of caught) {
    const pattern = hostPattern(template) ?? template;
    const matcher = patternMatcher(pattern);
    // An identity rule that caught a path needing its rewrite would hide that path's file.
    if (rewritten.some((file) => matcher.test(file.path))) continue;
    lines.push(`${pattern} ${pattern.replace('*', ':splat')} 200`);
  }
  return lines;
}

function headersText(rules: readonly HeaderRule[]): string {
  const lines = ["# plugin depot: written by `npm run depot -- export-static`: the origin's headers, per endpoint."];
  for (const rule of rules) {
    refuseControl(rule.pattern);
    lines.push(rule.pattern);
    for (const [name, value] of Object.entries(rule.headers)) {
      refuseControl(`${name}: ${value}`);
      lines.push(`  ${name}: ${value}`);
    }
  }
  lines.push('');
  return lines.join('\n');
}

/** The rule counts of an export's (or any folder's) `_redirects` and `_headers`: for the growth bench. */
export async function staticLayoutRuleCounts(dir: string): Promise<RuleCounts> {
  const rules = (name: string) =>
    readFile(join(dir, name), 'utf8').then((text) => text.split('\n').filter((line) => line && !line.startsWith('#')));
  const redirects = await rules('_redirects');
  const headers = (await rules('_headers')).filter((line) => !/^\s/.test(line));
  const dynamic = redirects.filter(isDynamic).length;
  return {
    redirects: redirects.length,
    staticRedirects: redirects.length - dynamic,
    dynamicRedirects: dynamic,
    headers: headers.length,
  };
}

/** The rule counts the static layout of a built tree would have (its manifest, no export written). */
export async function treeStaticRuleCounts(treeDir: string, originUrl = 'http://localhost:3000'): Promise<RuleCounts> {
  const manifest = JSON.parse(await readFile(join(treeDir, 'manifest.json'), 'utf8')) as {
    routes: Record<string, RouteEntry>;
  };
  return staticLayoutConfigs(manifest.routes, originUrl).counts;
}
