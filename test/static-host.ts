import { createServer, type Server } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HOST_CONTENT_TYPES, extensionOf } from '../build/static-layout.ts';

/**
 * A static host as Netlify and Cloudflare Pages document theirs, for the subset the export uses:
 * `_redirects` lines `source destination status`, the first whose source matches wins (a
 * `:placeholder` is one segment, `*` anything, `:splat` its value); Netlify serves a file that
 * exists at the request's path before any rule (shadowing) and Cloudflare Pages applies rules
 * first; a 200 to another host is a proxy (Netlify; Cloudflare Pages drops the rule). Then the file
 * at the path, or `<path>.html` (clean URLs), or `/index.html` for `/`, else `404.html` with 404.
 * Content-Type by extension; `_headers` blocks matched against the request's path, a header two
 * matching rules set joined with ", " (Cloudflare Pages' documented merge).
 */
export type HostKind = 'netlify' | 'cloudflare';

type Redirect = { regex: RegExp; names: string[]; to: string; status: number };

export async function startStaticHost(
  dir: string,
  kind: HostKind,
): Promise<{ url: string; close: () => Promise<void> }> {
  // Cloudflare Pages cannot proxy to another host: it drops such a rule when it reads the file.
  const redirects = parseRedirects(await readFile(join(dir, '_redirects'), 'utf8')).filter(
    (rule) => kind === 'netlify' || !(rule.status === 200 && /^https?:/.test(rule.to)),
  );
  const headerRules = parseHeaders(await readFile(join(dir, '_headers'), 'utf8'));
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url!, 'http://host').pathname);
    answer(path).then(
      ({ status, body, headers }) => {
        response.writeHead(status, headers);
        response.end(body);
      },
      (error: Error) => {
        response.writeHead(500);
        response.end(error.message);
      },
    );
  });
  async function answer(path: string) {
    let target = path;
    const shadowed = kind === 'netlify' && (await servedFile(dir, path)) !== undefined;
    const rule = shadowed ? undefined : redirects.find((r) => r.regex.test(path));
    if (rule) {
      const to = substitute(rule, path);
      if (rule.status === 301 || rule.status === 302)
        return { status: rule.status, body: '', headers: { location: to } };
      if (/^https?:/.test(to)) return { status: 502, body: `proxy to ${to}`, headers: {} };
      target = to;
    }
    const file = await servedFile(dir, target);
    if (!file) return { status: 404, body: await readFile(join(dir, '404.html')).catch(() => ''), headers: {} };
    const headers: Record<string, string> = {
      'content-type': HOST_CONTENT_TYPES[extensionOf(file)] ?? 'application/octet-stream',
    };
    for (const [name, value] of matchingHeaders(headerRules, path)) headers[name] = value;
    return { status: 200, body: await readFile(join(dir, file)), headers };
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function servedFile(dir: string, path: string): Promise<string | undefined> {
  const candidates = path === '/' ? ['/index.html'] : path.endsWith('/') ? [] : [path, `${path}.html`];
  for (const candidate of candidates) {
    const info = await stat(join(dir, candidate)).catch(() => null);
    if (info?.isFile()) return candidate;
  }
  return undefined;
}

function parseRedirects(text: string): Redirect[] {
  return rulesOf(text).map((line) => {
    const [from, to, status] = line.split(/\s+/);
    const names = [...from!.matchAll(/:([A-Za-z]\w*)|\*/g)].map((m) => m[1] ?? 'splat');
    const regex = patternRegex(from!);
    return { regex, names, to: to!, status: Number(status ?? 301) };
  });
}

function substitute(rule: Redirect, path: string): string {
  const values = rule.regex.exec(path)!.slice(1);
  let to = rule.to;
  rule.names.forEach((name, index) => (to = to.replaceAll(`:${name}`, values[index]!)));
  return to;
}

function parseHeaders(text: string): { test: (path: string) => boolean; headers: [string, string][] }[] {
  const rules: { test: (path: string) => boolean; headers: [string, string][] }[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    if (!/^\s/.test(line)) rules.push({ test: (path) => patternRegex(line.trim()).test(path), headers: [] });
    else {
      const colon = line.indexOf(':');
      rules.at(-1)!.headers.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
    }
  }
  return rules;
}

function matchingHeaders(rules: ReturnType<typeof parseHeaders>, path: string): Map<string, string> {
  const merged = new Map<string, string>();
  for (const rule of rules)
    if (rule.test(path))
      for (const [name, value] of rule.headers)
        merged.set(name, merged.has(name) ? `${merged.get(name)}, ${value}` : value);
  return merged;
}

const rulesOf = (text: string) => text.split('\n').filter((line) => line.trim() && !line.startsWith('#'));

/** A rule's source as a regular expression: `:name` one segment, `*` anything (captured), the rest literal. */
function patternRegex(pattern: string): RegExp {
  const source = pattern
    .split(/(:[A-Za-z]\w*|\*)/)
    .map((part) =>
      part === '*' ? '(.*)' : part.startsWith(':') ? '([^/]+)' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${source}$`);
}
