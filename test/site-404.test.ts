import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { nginxConfig } from '../build/deploy-configs.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { canonicalPagePath } from '../server/pages.ts';
import { NOT_FOUND_PAGE } from '../server/tree/format.ts';
import { Manifest } from '../server/tree/format.ts';
import { currentTreeDir } from '../server/tree/open.ts';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import { axeViolations } from './axe.ts';
import {
  CHROMIUM_ARGS,
  ROOT,
  findProgram,
  freePort,
  makeWorkspace,
  runDepot,
  startNginx,
  startTestOrigin,
  type NginxServer,
  until,
  type Workspace,
} from './helpers.ts';

// The site's HTML 404 page and its one address per page (server/pages.ts): at the origin, through
// nginx with the build's nginx.conf, on static hosts (export-static's 404.html, _redirects) and in a browser.

const UNKNOWN_PAGES = [
  '/nope',
  '/brands/logo',
  '/versions/nosuch',
  '/versions/nosuch/21',
  '/versions/constructor', // no alias: the alias table is an object
  '/versions/__proto__/21',
  '/versions/papermc/99',
  '/version/plugin-0-missing',
  '/api', // not under /api/: a page path
  '/nope?x=1',
];
/** Unknown paths of the API and the brand images: SPEC 7's JSON 404, trailing slash or not. */
const UNKNOWN_API = ['/api/nope', '/api/nope/', '/api/plugin-versions/latest/nosuch', '/brand/nosuch/light.png'];
/** Request -> Location: a trailing slash, an alias, letter case, /versions/<software>, queries kept. */
const REDIRECTS: [string, string][] = [
  ['/brands/', '/brands'],
  ['/brands/?x=1&y=2', '/brands?x=1&y=2'],
  ['/versions/', '/versions'],
  ['/versions/papermc/21/', '/versions/papermc/21'],
  ['/versions/paper/21', '/versions/papermc/21'],
  ['/versions/paper', '/versions/papermc/all'],
  ['/versions/papermc', '/versions/papermc/all'],
  ['/versions/Bungee/all?q=1', '/versions/bungeecord/all?q=1'],
  ['/versions/all/all', '/versions'],
  ['//example.com/', '/example.com'], // never `//host`, which a browser reads as another site
];
/** The headers the origin and nginx must give the 404 page alike. */
const PAGE_HEADERS = ['content-type', 'cache-control', 'content-security-policy', 'x-content-type-options', 'etag'];

const ctx = {} as {
  workspace: Workspace;
  origin: RunningOrigin;
  treeDir: string;
  manifest: Manifest;
  /** The paths of the requests the origin answered. */
  answered: string[];
};
const NGINX = findProgram('nginx');
const CHROMIUM = findProgram('chromium');

/** One built site and origin for every suite of this file (a site build takes seconds): the last suite to end removes it. */
let started: Promise<void> | undefined;
let suitesLeft = 1 + (NGINX ? 1 : 0) + (CHROMIUM ? 1 : 0);
const setup = () =>
  (started ??= (async () => {
    ctx.workspace = await makeWorkspace({ site: true });
    ctx.answered = [];
    ctx.origin = await startTestOrigin(ctx.workspace, { log: (entry) => ctx.answered.push(entry.path) });
    ctx.treeDir = (await currentTreeDir(ctx.workspace.distDir))!;
    ctx.manifest = Manifest.parse(JSON.parse(await readFile(join(ctx.treeDir, 'manifest.json'), 'utf8')));
  })());
const teardown = async () => {
  if (--suitesLeft > 0) return;
  await ctx.origin.close();
  await ctx.workspace.remove();
};

/** The built site as `npm run depot -- export-static` lays it out for static hosts (once). */
let exported: Promise<string> | undefined;
const exportSite = () =>
  (exported ??= (async () => {
    const dir = join(ctx.workspace.dir, 'public');
    const result = await runDepot(['export-static', dir], ctx.workspace);
    assert.is(result.code, 0, result.stderr);
    return dir;
  })());

const get = (url: string, method = 'GET') => fetch(url, { method, redirect: 'manual' });

/** The same answers wherever the site is served from (`base`: the origin or nginx). */
function pageAnswers(name: string, base: () => string) {
  const test = suite(name);
  test('unknown page paths: the HTML 404 page with a way back and the known softwares', async () => {
    for (const path of UNKNOWN_PAGES) {
      const answer = await get(base() + path);
      assert.is(answer.status, 404, path);
      assert.is(answer.headers.get('content-type'), 'text/html; charset=utf-8', path);
      assert.is(answer.headers.get('etag'), null, `${path}: a 404 has no ETag (never a 304)`);
      const html = await answer.text();
      assert.match(html, '<h1>Page not found</h1>', path);
      assert.match(html, '<a href="/">Downloads</a>', path);
      assert.match(html, '<a href="/versions">Version history</a>', path);
      for (const software of SERVER_SOFTWARE)
        assert.match(html, `href="/versions/${software.toLowerCase()}/all">${software}</a>`, path);
      const head = await get(base() + path, 'HEAD');
      assert.is(head.status, 404, `HEAD ${path}`);
      assert.is(await head.text(), '', `HEAD ${path}`);
    }
  });
  test('the API and brand images keep their JSON 404 (SPEC 2.9), a trailing slash included', async () => {
    for (const path of UNKNOWN_API) {
      const answer = await get(base() + path);
      assert.is(answer.status, 404, path);
      assert.is(answer.headers.get('content-type'), 'application/json; charset=utf-8', path);
      const body = (await answer.json()) as { error: unknown };
      assert.type(body.error, 'string', path);
    }
  });
  test('page paths redirect (301) to their one address, query kept; the address answers 200', async () => {
    for (const [path, location] of REDIRECTS) {
      const answer = await get(base() + path);
      assert.is(answer.status, 301, path);
      assert.is(answer.headers.get('location'), location, path);
      assert.is(answer.headers.get('cache-control'), 'public, max-age=60', path);
      if (location === '/example.com') continue;
      const target = await get(base() + location);
      assert.is(target.status, 200, location);
      assert.is(target.headers.get('content-type'), 'text/html; charset=utf-8', location);
    }
  });
  test('a page with a query string the manifest does not list is the page', async () => {
    const answer = await get(`${base()}/versions/papermc/21?utm_source=x`);
    assert.is(answer.status, 200);
    assert.match(await answer.text(), 'PaperMC on Java 21');
  });
  return test;
}

const origin = pageAnswers('site 404 at the origin', () => ctx.origin.url);
origin.before(setup);
origin.after(teardown);
origin("404.html in export-static's folder is the 404 page, for static hosts; the tree has none", async () => {
  const exportDir = await exportSite();
  const page = ctx.manifest.routes[NOT_FOUND_PAGE]!;
  assert.ok(page, 'the manifest has the 404 page');
  const [emitted, file] = await Promise.all([
    readFile(join(exportDir, '404.html')),
    readFile(join(ctx.treeDir, page.file)),
  ]);
  assert.ok(emitted.equals(file));
  assert.not.ok(existsSync(join(ctx.treeDir, '404.html')), 'static hosts publish the export, not the tree');
});
origin("_redirects: the /versions/ redirects lead to pages; only endpoints' paths go to the origin", async () => {
  const rules = (await readFile(join(await exportSite(), '_redirects'), 'utf8'))
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split(' '));
  const redirects = rules.filter(([, , status]) => status === '301');
  assert.ok(redirects.length >= SERVER_SOFTWARE.length);
  for (const [from, to] of redirects) {
    assert.is(canonicalPagePath(from!.replace('*', ':splat')), to, `${from} -> ${to}, as the origin redirects`);
    if (!to!.includes(':splat')) assert.ok(ctx.manifest.routes[to!], `${to} is a page`);
  }
  assert.ok(rules.some(([from, to]) => from === '/versions/paper/*' && to === '/versions/papermc/:splat'));
  const toOrigin = rules.filter(([, to]) => /^https?:/.test(to!)).map(([from]) => from);
  assert.equal(toOrigin.sort(), ['/api/*', '/brand/*', '/healthz']);
  assert.not.ok(
    rules.some(([from]) => from === '/*'),
    'no catch-all: the host answers other paths with 404.html',
  );
});
origin.run();

if (!NGINX)
  console.warn('site-404.test.ts: nginx not installed, the nginx suite is not run (apt-get install -y nginx)');
else {
  const withNginx = { nginx: undefined as NginxServer | undefined };
  const proxied = pageAnswers('site 404 through nginx with the generated nginx.conf', () => withNginx.nginx!.url);
  proxied.before(async () => {
    await setup();
    const port = await freePort();
    const include = join(ctx.workspace.dir, 'depot.conf');
    const config = nginxConfig(ctx.manifest.routes, {
      origins: [new URL(ctx.origin.url).host],
      listen: `127.0.0.1:${port}`,
      realIpFrom: [],
      originUrl: ctx.origin.url,
      treeDir: ctx.treeDir,
      rateLimit: null,
    });
    await writeFile(include, config);
    withNginx.nginx = await startNginx(NGINX, include, port);
  });
  proxied.after(async () => {
    await withNginx.nginx?.stop();
    await teardown();
  });
  proxied('nginx answers unknown pages and trailing slashes itself, with the headers the origin gives', async () => {
    const paths = ['/nope', '/brands/logo', '/brands/', '/versions/papermc/21/?a=1'];
    for (const path of paths) {
      const fromNginx = await get(withNginx.nginx!.url + path);
      const fromOrigin = await get(ctx.origin.url + path);
      assert.is(fromNginx.status, fromOrigin.status, path);
      assert.is(fromNginx.headers.get('location'), fromOrigin.headers.get('location'), path);
      if (fromOrigin.status === 404)
        for (const name of PAGE_HEADERS)
          assert.is(fromNginx.headers.get(name), fromOrigin.headers.get(name), `${path}: ${name}`);
    }
    await until(() => ctx.answered.length >= paths.length, 'the origin logged its answers');
    assert.equal(
      ctx.answered.slice(-paths.length),
      paths.map((path) => path.split('?')[0]),
      'the origin saw only the requests sent to it directly',
    );
  });
  proxied.run();
}

if (!CHROMIUM) console.warn('site-404.test.ts: chromium not installed, the browser check is not run');
else {
  const browser = suite('site 404 in a browser');
  browser.before(setup);
  browser.after(teardown);
  browser(
    'the 404 page renders with no console error, passes axe-core, and its links lead back (390 and 1440 px, light and dark)',
    async () => {
      const screenshots = join(ROOT, '.screenshots');
      await mkdir(screenshots, { recursive: true });
      const chrome = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      try {
        for (const width of [390, 1440])
          for (const colorScheme of ['light', 'dark'] as const) {
            const where = `${width} px, ${colorScheme}`;
            // bypassCSP: the page's CSP (script-src 'self') would refuse the injected axe-core.
            const context = await chrome.newContext({ viewport: { width, height: 900 }, colorScheme, bypassCSP: true });
            const page = await context.newPage();
            const url = `${ctx.origin.url}/versions/paper-mc/21`;
            const problems: string[] = [];
            page.on('console', (message) => {
              // The document's own 404 is the point; chromium reports it as a console error.
              if (message.type() === 'error' && message.location().url !== url)
                problems.push(`console: ${message.text()}`);
            });
            page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
            page.on('response', (response) => {
              if (response.status() >= 400 && response.url() !== url)
                problems.push(`${response.status()}: ${response.url()}`);
            });
            const response = await page.goto(url, { waitUntil: 'networkidle' });
            assert.is(response?.status(), 404, where);
            assert.is(await page.locator('h1').textContent(), 'Page not found', where);
            const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
            assert.ok(overflow <= 0, `${where}: the page is ${overflow} px wider than the screen`);
            assert.equal(await axeViolations(page), [], `${where}: axe-core`);
            await page.screenshot({ path: join(screenshots, `404-${width}-${colorScheme}.png`), fullPage: true });
            await page.getByRole('link', { name: 'Version history', exact: true }).last().click();
            await page.waitForURL(`${ctx.origin.url}/versions`);
            assert.equal(problems, [], where);
            await context.close();
          }
      } finally {
        await chrome.close();
      }
    },
  );
  browser.run();
}
