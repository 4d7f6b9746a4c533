import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BRAND_NAMES, type BrandName } from '../server/brands/brands.ts';
import { parseRateLimit } from '../server/http/rate-limit-policy.ts';
import { openApiDocument } from '../server/openapi.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { axeViolations } from './axe.ts';
import { FORM_MISALIGNMENTS } from './form-alignment.ts';
import { CHROMIUM_ARGS, ROOT, findProgram, makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

// The brand kit, the chart playground and the API reference in a real browser against the real
// origin: at phone and desktop widths, light and dark, nothing clipped, and each page's own behaviour.

const PAGES = ['/brands', '/charts', '/reference'];
const SIZES = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1440, height: 900 },
];
const SCHEMES = ['light', 'dark'] as const;
const SCREENSHOTS = join(ROOT, '.screenshots');
/** The limited origin's RATE_LIMIT: few enough to reach from the playground, and unlike the default. */
const TINY_RATE_LIMIT = '3/2m';
/** How people name the brands: as the projects name themselves. */
const DISPLAY_NAMES: Record<BrandName, string> = {
  papermc: 'PaperMC',
  velocity: 'Velocity',
  folia: 'Folia',
  canvasmc: 'CanvasMC',
  leafmc: 'LeafMC',
  purpurmc: 'Purpur',
};

const CHROMIUM = findProgram('chromium');
if (!CHROMIUM)
  console.warn(
    'site-pages.test.ts: chromium not installed, browser tests not run (apt-get install -y chromium; .ci/run does)',
  );
else {
  const ctx = {} as {
    workspace: Workspace;
    origin: RunningOrigin;
    limited: RunningOrigin;
    browser: Browser;
  };

  /** A page at one size and colour scheme (CSP bypassed so that axe-core can be injected), recording page errors. */
  async function openPage(
    options: { width?: number; height?: number; colorScheme?: 'light' | 'dark'; origin?: RunningOrigin } = {},
  ) {
    const context = await ctx.browser.newContext({
      viewport: { width: options.width ?? 1440, height: options.height ?? 900 },
      colorScheme: options.colorScheme ?? 'light',
      bypassCSP: true,
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const base = (options.origin ?? ctx.origin).url;
    return { page, errors, go: (path: string) => page.goto(base + path), close: () => context.close() };
  }

  /**
   * What is wider than its box (tiles, table boxes, code blocks, cards), the tiles' widths and the
   * page's own overflow. A string: tsx names the functions of a test's source, and those names do
   * not exist in the page.
   */
  const MEASURE = `(() => {
    const clipped = [];
    for (const selector of ['.tile', '.table-scroll', 'pre', '.card'])
      for (const e of document.querySelectorAll(selector))
        if (e.scrollWidth > e.clientWidth)
          clipped.push(selector + ' ' + (e.id || e.closest('[id]')?.id) + ': ' + e.scrollWidth + ' > ' + e.clientWidth);
    return {
      clipped,
      tileWidths: [...document.querySelectorAll('.tile')].map((t) => t.getBoundingClientRect().width),
      overflow: document.documentElement.scrollWidth - window.innerWidth,
    };
  })()`;

  const pages = suite('brand kit, chart playground and API reference in a browser');
  pages.before(async () => {
    ctx.workspace = await makeWorkspace({ site: true });
    ctx.origin = await startTestOrigin(ctx.workspace);
    ctx.limited = await startTestOrigin(ctx.workspace, { rateLimit: parseRateLimit(TINY_RATE_LIMIT)! });
    ctx.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    await mkdir(SCREENSHOTS, { recursive: true });
  });
  pages.after(async () => {
    await ctx.browser?.close();
    await ctx.origin?.close();
    await ctx.limited?.close();
    await ctx.workspace?.remove();
  });

  pages(
    'at 390 and 1440 px, light and dark: no tile, table or code block clipped, form fields in line, readable tiles, no axe violation',
    async () => {
      for (const size of SIZES) {
        for (const colorScheme of SCHEMES) {
          const { page, errors, go, close } = await openPage({ ...size, colorScheme });
          try {
            for (const path of PAGES) {
              await go(path);
              await page.waitForLoadState('networkidle');
              const where = `${path} at ${size.width} px, ${colorScheme}`;
              // Every static-links table is measured open.
              await page.evaluate(() => document.querySelectorAll('details').forEach((d) => (d.open = true)));
              const report = (await page.evaluate(MEASURE)) as {
                clipped: string[];
                tileWidths: number[];
                overflow: number;
              };
              assert.equal(report.clipped, [], where);
              assert.equal(await page.evaluate(FORM_MISALIGNMENTS), [], `${where}: form fields out of line`);
              assert.ok(report.overflow <= 0, `${where}: the page is ${report.overflow} px wider than the screen`);
              if (path === '/brands') {
                assert.ok(report.tileWidths.length > 0, where);
                const narrowest = Math.min(...report.tileWidths);
                const readable = size.width >= 1440 ? 200 : 300;
                assert.ok(narrowest >= readable, `${where}: a tile is ${narrowest} px wide, under ${readable}`);
              }
              // axe-core takes seconds on the long pages: each page once light on a phone, once dark on a desktop.
              if ((size.name === 'phone') === (colorScheme === 'light'))
                assert.equal(await axeViolations(page), [], where);
              // The long pages' full length would be a 30,000 px image: their first screen.
              await page.screenshot({
                path: join(SCREENSHOTS, `pages-${path.slice(1)}-${size.name}-${colorScheme}.png`),
                fullPage: path === '/charts',
              });
            }
            assert.equal(errors, []);
          } finally {
            await close();
          }
        }
      }
    },
  );

  pages(
    'the brand kit names brands by their display names, and each static link by brand, variant, size and format',
    async () => {
      const { page, close } = await openPage();
      try {
        await page.goto(ctx.origin.url + '/brands');
        const names = BRAND_NAMES.map((brand) => DISPLAY_NAMES[brand]);
        assert.equal(await page.locator('main h2[id^="brand-"]').allInnerTexts(), names);
        assert.equal(await page.locator('#bb-brand option').allInnerTexts(), names);
        assert.match(await page.locator('h3#variant-papermc-light').innerText(), /^PaperMC · light$/);
        const links = await page.$$eval('a[href^="/brand/"]', (anchors) =>
          anchors.map((a) => ({ href: a.getAttribute('href')!, name: a.getAttribute('aria-label') ?? '' })),
        );
        assert.ok(links.length > 500, `${links.length} static links`);
        assert.is(new Set(links.map((l) => l.name)).size, links.length, 'every accessible name is unique');
        for (const { href, name } of links) {
          // /brand/papermc/light.png (original) or /brand/papermc/light/256.png
          const [, brand, variant, size, format] = /^\/brand\/([^/]+)\/([^/.]+)(?:\/(\d+))?\.(\w+)$/.exec(href)!;
          const expected = `${DISPLAY_NAMES[brand as BrandName]} ${variant} logo, ${size ? `${size} px` : 'original size'}, ${format!.toUpperCase()}`;
          assert.is(name, expected, href);
        }
        // The name the browser computes is that label.
        await page.locator('#variant-velocity-blue ~ details summary').click();
        assert.is(await page.getByRole('link', { name: 'Velocity blue logo, 256 px, WEBP', exact: true }).count(), 1);
      } finally {
        await close();
      }
    },
  );

  pages("the builder's URL box, Copy and Open follow the form: none while the width is invalid", async () => {
    const { page, errors, close } = await openPage({ width: 390, height: 844 });
    try {
      await page.goto(ctx.origin.url + '/brands');
      const url = page.locator('#bb-url');
      const copy = page.getByRole('button', { name: 'Copy the built URL' });
      const open = page.locator('#bb-open');
      await page.getByLabel('Width in px').fill('300');
      assert.is(await url.innerText(), '/api/image/brand/papermc?size=300');
      assert.is(await copy.isEnabled(), true);
      assert.is(await open.getAttribute('href'), '/api/image/brand/papermc?size=300');
      for (const invalid of ['5000', '0', '1.5']) {
        await page.getByLabel('Width in px').fill(invalid);
        const error = page.locator('#bb-error');
        assert.match(await error.innerText(), /whole number from 1 to 2048/, invalid);
        // Beside the field: inside the width's own field, and read with it.
        assert.is(await page.locator('.field:has(#bb-size) #bb-error').count(), 1);
        assert.match((await page.getByLabel('Width in px').getAttribute('aria-describedby'))!, /\bbb-error\b/);
        assert.is(await page.getByLabel('Width in px').getAttribute('aria-invalid'), 'true');
        assert.not.match(await url.innerText(), /\/api\//, `${invalid}: no URL shown`);
        assert.is(await copy.isDisabled(), true, invalid);
        assert.is(await open.getAttribute('href'), null, invalid);
        assert.is(await open.getAttribute('aria-disabled'), 'true', invalid);
      }
      await page.getByLabel('Width in px').fill('');
      assert.is(await url.innerText(), '/api/image/brand/papermc');
      assert.is(await copy.isEnabled(), true);
      assert.is(await open.getAttribute('href'), '/api/image/brand/papermc');
      assert.is(await page.locator('#bb-error').innerText(), '');
      assert.equal(errors, []);
    } finally {
      await close();
    }
  });

  pages("the chart playground says the API's own error for a 400 and a server error for a 500", async () => {
    const { page, errors, close } = await openPage();
    try {
      // The form refuses what the API refuses, so a 400 is made on the way: the real origin answers
      // the chart URL with a width it refuses.
      const refused = `${ctx.origin.url}/api/charts/example?days=30&width=100`;
      const apiError = ((await (await fetch(refused)).json()) as { error: string }).error.replace(/\.$/, '');
      assert.match(apiError, /width/);
      const chartUrl = (search: string) => (url: URL) =>
        url.pathname === '/api/charts/example' && url.search === search;
      await page.route(chartUrl('?days=30'), (route) => route.continue({ url: refused }));
      await page.goto(ctx.origin.url + '/charts');
      await page.getByLabel('Days').fill('30');
      await page.waitForFunction((text) => document.getElementById('cp-error')?.textContent?.includes(text), apiError, {
        timeout: 5000,
      });
      assert.not.match(await page.locator('#cp-error').innerText(), /too many/i);
      await page.route(chartUrl('?days=31'), (route) =>
        route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":"Internal server error"}' }),
      );
      await page.getByLabel('Days').fill('31');
      await page.waitForFunction(() => /server failed/.test(document.getElementById('cp-error')?.textContent ?? ''), {
        timeout: 5000,
      });
      const text = await page.locator('#cp-error').innerText();
      assert.match(text, /500/);
      assert.not.match(text, /too many/i);
      assert.equal(errors, []);
    } finally {
      await close();
    }
  });

  pages('the chart playground says the limit and the wait from the RateLimit headers of a 429', async () => {
    const { page, errors, close } = await openPage({ origin: ctx.limited });
    try {
      await page.goto(ctx.limited.url + '/charts');
      const error = page.locator('#cp-error');
      // Each new chart is a request: a few changes spend the tiny limit (bounded number of tries).
      for (let days = 10; days < 20 && !/too many/i.test(await error.innerText()); days++) {
        await page.getByLabel('Days').fill(String(days));
        await page.waitForTimeout(600);
      }
      const text = await error.innerText();
      assert.match(text, /the limit is 3 per 2 minutes/, text);
      assert.match(text, /try again in \d+ (seconds?|minutes?)/, text);
      assert.not.match(text, /100/, 'not the default limit');
      assert.equal(errors, []);
    } finally {
      await close();
    }
  });

  pages('the example chart and its hint agree on when it ends', async () => {
    const { page, close } = await openPage();
    try {
      await page.goto(ctx.origin.url + '/charts');
      const hint = await page.locator('#cp-days-hint').innerText();
      assert.not.match(hint, /ending now/);
      assert.match(hint, /1 June 2026 in the example/);
      const svg = await (await fetch(ctx.origin.url + '/api/charts/example')).text();
      const axis = [...svg.matchAll(/class="x-label"[^>]*>([^<]+)</g)].map((label) => label[1]);
      assert.is(axis.at(-1), 'Jun 1', 'the example axis ends on 1 June');
    } finally {
      await close();
    }
  });

  pages(
    'the API reference: each endpoint with a curl example and a real example answer, no SPEC references, versions labelled',
    async () => {
      const { page, close } = await openPage();
      try {
        await page.goto(ctx.origin.url + '/reference');
        const doc = openApiDocument();
        const all = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
          Object.entries(item)
            .filter(([key]) => ['get', 'post', 'put', 'delete', 'patch'].includes(key))
            .map(([method, operation]) => ({
              method: method.toUpperCase(),
              path,
              publishing: ((operation as { tags?: string[] }).tags ?? []).includes('publishing'),
            })),
        );
        // Publishing (issue 30) needs a token and changes the depot: listed with its auth, without a live example.
        const operations = all.filter((o) => !o.publishing);
        const titles = await page.$$eval('article.operation h3', (headings) =>
          headings.map((h) => h.textContent!.replace(/\s+/g, ' ').trim()),
        );
        for (const o of all.filter((o) => o.publishing)) assert.ok(titles.includes(`${o.method} ${o.path}`), o.path);
        const examples = await page.$$eval('article.operation:has(.reference-example)', (articles) =>
          articles.map((article) => ({
            title: article.querySelector('h3')!.textContent!.replace(/\s+/g, ' ').trim(),
            request: article.querySelector('.example-request')!.textContent!,
            answer: article.querySelector('.example-answer')!.textContent!,
          })),
        );
        assert.equal(
          examples.map((e) => e.title),
          operations.map((o) => `${o.method} ${o.path}`),
        );
        for (const { title, request, answer } of examples) {
          const [method, template] = title.split(' ') as [string, string];
          const match = /^curl .*'(https?:\/\/[^/']+)(\/[^']*)'$/.exec(request);
          assert.ok(match, `${title}: ${request}`);
          const [, origin, path] = match!;
          assert.is(origin, ctx.origin.url, `${title}: the address of the server the page came from`);
          const pattern = new RegExp(`^${template.replace(/[.?]/g, '\\$&').replace(/\{\w+\}/g, '[^/?]+')}(\\?.*)?$`);
          assert.match(path!, pattern, title);
          const [status] = /^HTTP\/1\.1 (\d{3})/.exec(answer)!.slice(1);
          assert.ok(status, `${title}: ${answer}`);
          // The answer is the API's: the origin answers the same request with the same status (but
          // for the example server, which exists only where the examples were asked).
          if (method === 'GET' && !template.startsWith('/api/servers/'))
            assert.is(String((await fetch(ctx.origin.url + path)).status), status, title);
        }
        const text = await page.locator('main').innerText();
        assert.not.match(text, /SPEC \d/);
        assert.is(text.split('Errors are JSON').length - 1, 1, '"Errors are JSON" once');
        assert.match(text, new RegExp(`API version ${doc.info.version.replaceAll('.', '\\.')}`));
        assert.match(text, new RegExp(`OpenAPI ${doc.openapi.replaceAll('.', '\\.')} document`));
        assert.not.match(text, new RegExp(`OpenAPI ${doc.info.version.replaceAll('.', '\\.')}`));
      } finally {
        await close();
      }
    },
  );

  pages.run();
}
