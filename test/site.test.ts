import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { DOMParser } from '@xmldom/xmldom';
import { chromium, type Browser } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningOrigin } from '../server/origin.ts';
import { jarPath } from '../server/versions/catalog.ts';
import { sha256Hex } from '../server/helpers/digest.ts';
import { pickLatest } from '../server/versions/latest.ts';
import { currentTreeDir, openTree, type Tree } from '../server/tree/open.ts';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import { FORM_MISALIGNMENTS } from './form-alignment.ts';
import { CHROMIUM_ARGS, ROOT, findProgram, makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

// The site in a real browser (Debian's chromium, driven by playwright-core) against the real origin.

const PAGES = [
  '/',
  '/versions',
  '/versions/papermc/all',
  '/versions/all/21',
  '/version/plugin-1793385900000-fbf68fcdf0', // the demo data's pre-release
  '/brands',
  '/charts',
  '/reference',
];
const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1280, height: 900 },
];
const SCREENSHOTS = join(ROOT, '.screenshots');

const CHROMIUM = findProgram('chromium');
if (!CHROMIUM)
  console.warn(
    'site.test.ts: chromium not installed, browser tests not run (apt-get install -y chromium; .ci/run does)',
  );
else {
  const ctx = {} as { workspace: Workspace; origin: RunningOrigin; browser: Browser; tree: Tree };

  /** A page that records every console error, page error and failed or refused request. */
  async function openPage(options: { width?: number; height?: number } = {}) {
    const context = await ctx.browser.newContext({
      viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
      acceptDownloads: true,
    });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
    });
    return { page, problems, close: () => context.close() };
  }
  const url = (path: string) => ctx.origin.url + path;

  const site = suite('site in a browser');
  site.before(async () => {
    ctx.workspace = await makeWorkspace({ site: true });
    ctx.origin = await startTestOrigin(ctx.workspace);
    ctx.tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
    ctx.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    await mkdir(SCREENSHOTS, { recursive: true });
  });
  site.after(async () => {
    await ctx.browser?.close();
    await ctx.origin.close();
    await ctx.workspace.remove();
  });

  site(
    'every page loads with no console error and no failed request, its form fields in line, on a phone and a desktop; screenshots kept',
    async () => {
      for (const size of WIDTHS) {
        const { page, problems, close } = await openPage(size);
        try {
          for (const path of PAGES) {
            const response = await page.goto(url(path), { waitUntil: 'networkidle' });
            assert.is(response?.status(), 200, path);
            // Lazy images below the fold load too: scroll through the page.
            await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
            await page.waitForLoadState('networkidle');
            assert.equal(problems, [], `${path} at ${size.width} px`);
            const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
            assert.ok(overflow <= 0, `${path} at ${size.width} px: the page is ${overflow} px wider than the screen`);
            assert.equal(
              await page.evaluate(FORM_MISALIGNMENTS),
              [],
              `${path} at ${size.width} px: form fields out of line`,
            );
            await page.evaluate(() => window.scrollTo(0, 0));
            await page.screenshot({
              path: join(SCREENSHOTS, `${path.slice(1).replaceAll('/', '-') || 'downloads'}-${size.name}.png`),
              fullPage: true,
            });
          }
        } finally {
          await close();
        }
      }
    },
  );

  site(
    'pages are accessible: one h1, a language, alt texts, labelled controls, keyboard focus on the skip link',
    async () => {
      const { page, close } = await openPage();
      try {
        for (const path of PAGES) {
          await page.goto(url(path));
          const report = await page.evaluate(() => ({
            lang: document.documentElement.lang,
            h1: document.querySelectorAll('h1').length,
            // An empty alt only for a logo beside its name: the link or heading it sits in says it.
            imagesWithoutAlt: [...document.images]
              .filter((img) => !img.alt.trim() && !(img.alt === '' && img.closest('a, h3')?.textContent?.trim()))
              .map((img) => img.src),
            unlabelled: [...document.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input, select')]
              .filter((control) => control.labels?.length === 0 && !control.getAttribute('aria-label'))
              .map((control) => control.outerHTML),
            unnamedButtons: [...document.querySelectorAll('button')].filter(
              (b) => !(b.getAttribute('aria-label') || b.textContent?.trim()),
            ).length,
          }));
          assert.equal(report, { lang: 'en', h1: 1, imagesWithoutAlt: [], unlabelled: [], unnamedButtons: 0 }, path);
          await page.keyboard.press('Tab');
          assert.is(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content', path);
        }
      } finally {
        await close();
      }
    },
  );

  site("the downloads page's button downloads the real JAR", async () => {
    const { page, problems, close } = await openPage();
    try {
      await page.goto(url('/'));
      const latest = pickLatest(ctx.tree.catalog.latest, 'Velocity')!;
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[data-download="Velocity"]')]);
      assert.is(download.suggestedFilename(), latest.fileName);
      const bytes = await readFile((await download.path())!);
      assert.is(sha256Hex(bytes), latest.sha256);
      assert.ok(bytes.equals(await readFile(jarPath(ctx.workspace.dataDir, latest.id))));
      assert.equal(problems, []);
    } finally {
      await close();
    }
  });

  site("each card offers the software's stable resolve link, which downloads the best build for it", async () => {
    const { page, problems, close } = await openPage();
    try {
      await page.goto(url('/'));
      for (const software of SERVER_SOFTWARE) {
        const links = await page.locator(`#${software.toLowerCase()} .stable-urls code`).allInnerTexts();
        assert.is(links[0], `/api/plugin-versions/download/latest/${software.toLowerCase()}`);
        const link = await page.locator(`#${software.toLowerCase()} .stable-url code`).innerText();
        assert.is(link, `/api/plugin-versions/download/resolve/${software.toLowerCase()}`);
        // Purpur has its own build; Waterfall has BungeeCord's: each resolves to a real JAR.
        const answer = await fetch(url(link));
        assert.is(answer.status, 200, link);
        const bytes = Buffer.from(await answer.arrayBuffer());
        const [id] = /[^/]+$/.exec(answer.headers.get('content-location') ?? '')!;
        assert.ok(bytes.equals(await readFile(jarPath(ctx.workspace.dataDir, id))), `${link}: the JAR of ${id}`);
      }
      assert.equal(problems, []);
    } finally {
      await close();
    }
  });

  site('the version history filters by clicking (static pages) and searches by typing', async () => {
    const { page, problems, close } = await openPage();
    const rows = () => page.locator('#history tbody tr:visible');
    try {
      await page.goto(url('/versions'));
      assert.is(await rows().count(), ctx.tree.catalog.versions.length);
      await page.getByRole('link', { name: 'PaperMC', exact: true }).click();
      await page.waitForURL(url('/versions/papermc/all'));
      const paper = ctx.tree.catalog.versions.filter((v) => v.serverSoftware.includes('PaperMC'));
      assert.is(await rows().count(), paper.length);
      for (const text of await rows().locator('td:nth-child(2)').allInnerTexts()) assert.match(text, /PaperMC/);
      await page.getByRole('link', { name: 'Java 21', exact: true }).click();
      await page.waitForURL(url('/versions/papermc/21'));
      // Java is a minimum: the page for Java 21 lists every PaperMC build that runs on it, newest first.
      const onJava21 = paper.filter((v) => Number(v.javaVersion) <= 21);
      assert.ok(
        onJava21.some((v) => v.javaVersion !== '21'),
        'the demo data has older-Java PaperMC builds',
      );
      assert.is(await rows().count(), onJava21.length);
      assert.equal(
        await rows().locator('td:nth-child(3)').allInnerTexts(),
        onJava21.map((v) => v.javaVersion),
      );
      assert.match(await page.locator('#java-minimum').innerText(), /Java 21 and older/);
      await page.getByRole('link', { name: 'All', exact: true }).first().click();
      await page.waitForURL(url('/versions/all/21'));
      await page.getByLabel('Search these versions').fill('velocity');
      const velocity = ctx.tree.catalog.versions.filter(
        (v) => Number(v.javaVersion) <= 21 && v.serverSoftware.includes('Velocity'),
      );
      assert.is(await rows().count(), velocity.length);
      assert.match(await page.locator('#version-search-count').innerText(), `${velocity.length} of `);
      assert.equal(problems, []);
    } finally {
      await close();
    }
  });

  site(
    'each version of the history links to its page, which downloads the file and names its stable URLs',
    async () => {
      const { page, problems, close } = await openPage();
      try {
        await page.goto(url('/versions/velocity/all'));
        const newest = ctx.tree.catalog.versions.find((v) => v.serverSoftware.includes('Velocity'))!;
        await page
          .locator('#history tbody tr')
          .first()
          .getByRole('link', { name: newest.pluginVersion, exact: true })
          .click();
        await page.waitForURL(url(`/version/${newest.id}`));
        assert.match(await page.locator('h1').innerText(), newest.pluginVersion);
        assert.match(await page.locator('.facts').innerText(), newest.sha256);
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('link', { name: `Download ${newest.fileName}` }).click(),
        ]);
        assert.is(sha256Hex(await readFile((await download.path())!)), newest.sha256);
        const urls = await page.locator('.urls code').allInnerTexts();
        assert.ok(urls.includes(`/api/plugin-versions/download/latest/velocity/${newest.javaVersion}`), urls.join());
        for (const path of urls) {
          const response = await fetch(url(path));
          assert.is(response.status, 200, path);
          assert.is(response.headers.get('content-type'), 'application/java-archive', path);
          await response.arrayBuffer();
        }
        assert.equal(problems, []);
      } finally {
        await close();
      }
    },
  );

  site(
    'a pre-release carries its channel and changelog, is never the main download of its card, and is in the feeds pages link',
    async () => {
      const { page, problems, close } = await openPage();
      try {
        const beta = ctx.tree.catalog.versions.find((v) => v.channel === 'beta')!;
        await page.goto(url('/'));
        const card = page.locator(`article#${beta.serverSoftware[0]!.toLowerCase()}`);
        assert.not.match(
          await card.locator('a.button').innerText(),
          beta.pluginVersion,
          'the main button is a release',
        );
        await card.getByRole('link', { name: new RegExp(beta.pluginVersion.replaceAll('.', '\\.')) }).click();
        await page.waitForURL(url(`/version/${beta.id}`));
        assert.match(await page.locator('h1 .badge').innerText(), /beta/i);
        const changes = page.locator('.changelog');
        assert.is(
          await changes.locator('h3').first().innerText(),
          beta.pluginVersion,
          "the changelog's ## heading, under Changes",
        );
        assert.ok((await changes.locator('li').count()) > 0);
        const urls = await page.locator('.urls code').allInnerTexts();
        assert.ok(
          urls.every((path, i) => i === 0 || path.endsWith('?channel=beta')),
          urls.join(),
        );
        const latest = await fetch(url(urls[1]!.replace('/download/latest/', '/latest/')));
        assert.is(((await latest.json()) as { version: { id: string } }).version.id, beta.id);
        await page.goto(url('/versions'));
        assert.match(await page.locator(`#history a[href="/version/${beta.id}"]`).locator('..').innerText(), /beta/i);
        await page.goto(url('/versions/leafmc/all'));
        const feeds = await page.$$eval('link[rel=alternate][type="application/atom+xml"]', (links) =>
          links.map((link) => (link as HTMLLinkElement).href),
        );
        assert.equal(feeds, [url('/api/plugin-versions/feed.atom'), url('/api/plugin-versions/feed/leafmc.atom')]);
        for (const feed of feeds) assert.match(await (await fetch(feed)).text(), beta.pluginVersion);
        assert.equal(problems, []);
      } finally {
        await close();
      }
    },
  );

  site('the chart playground redraws the example chart as options are typed, and writes the embed code', async () => {
    const { page, problems, close } = await openPage();
    try {
      await page.goto(url('/charts'));
      await page.getByLabel('dark').check();
      await page.getByLabel('Days').fill('30');
      await page.getByLabel('Width in px').fill('600');
      await page.getByLabel("Your server's id").fill('4f9c2a7e-1b2d-4c3e-8f90-a1b2c3d4e5f6');
      const chart = page.locator('#cp-chart');
      // The form redraws 300 ms after the last input: under load the chart can be redrawn between two
      // fills, before the id is typed, so wait for the embed code to carry the id as well.
      await page.waitForFunction(() => {
        const img = document.getElementById('cp-chart') as HTMLImageElement;
        const embed = document.getElementById('cp-svg')?.textContent ?? '';
        return img.src.includes('days=30') && img.complete && img.naturalWidth === 600 && embed.includes('4f9c2a7e');
      });
      const src = (await chart.getAttribute('src'))!;
      assert.is(src, '/api/charts/example?days=30&width=600&theme=dark');
      const svg = new DOMParser().parseFromString(await (await fetch(url(src))).text(), 'image/svg+xml');
      assert.is(svg.documentElement?.getAttribute('width'), '600');
      assert.match(await (await fetch(url(src))).text(), /#1a1a1a/);
      const embed = await page.locator('#cp-svg').innerText();
      assert.is(
        embed,
        `<img src="${ctx.origin.url}/api/servers/4f9c2a7e-1b2d-4c3e-8f90-a1b2c3d4e5f6/chart/players?days=30&width=600&theme=dark" width="600" height="400" alt="Players on my server">`,
      );
      assert.match(await page.locator('#cp-png').innerText(), /theme=dark&format=png"/);
      // theme=auto carries both palettes in one SVG; a transparent background leaves the page showing.
      await page.getByLabel('auto').check();
      await page.getByLabel('transparent').check();
      await page.waitForFunction(() =>
        (document.getElementById('cp-chart') as HTMLImageElement).src.includes('background=transparent'),
      );
      const auto = (await chart.getAttribute('src'))!;
      assert.is(auto, '/api/charts/example?days=30&width=600&theme=auto&background=transparent');
      assert.match(await (await fetch(url(auto))).text(), /@media \(prefers-color-scheme: ?dark\)/);
      assert.match(await page.locator('#cp-svg').innerText(), /theme=auto&background=transparent"/);
      await page.getByLabel('Days').fill('400');
      await page.waitForFunction(() =>
        document.getElementById('cp-error')?.textContent?.includes('days must be a whole number from 1 to 365'),
      );
      assert.is(await chart.getAttribute('src'), auto, 'an invalid value does not redraw');
      assert.equal(problems, []);
    } finally {
      await close();
    }
  });

  site("the brand builder's URL returns the image it describes", async () => {
    const { page, problems, close } = await openPage();
    try {
      await page.goto(url('/brands'));
      await page.getByLabel('Brand').selectOption('velocity');
      await page.getByLabel('Variant').selectOption('blue');
      await page.getByLabel('Width in px').fill('300');
      await page.getByLabel('Format').selectOption('webp');
      const built = await page.locator('#bb-url').innerText();
      assert.is(built, '/api/image/brand/velocity?variant=blue&size=300&format=webp');
      const response = await fetch(url(built));
      assert.is(response.headers.get('content-type'), 'image/webp');
      const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
      assert.equal([meta.format, meta.width], ['webp', 300]);
      await page.waitForFunction(
        () => (document.getElementById('bb-preview') as HTMLImageElement).naturalWidth === 300,
      );
      await page.getByLabel('Serve as a download').check();
      const download = await page.locator('#bb-url').innerText();
      assert.match(
        (await fetch(url(download))).headers.get('content-disposition')!,
        /^attachment; filename="velocity-blue-300\.webp"$/,
      );
      await page.getByLabel('Width in px').fill('5000');
      assert.match(await page.locator('#bb-error').innerText(), /from 1 to 2048/);
      assert.is.not(await page.locator('#bb-url').innerText(), download, 'an invalid width offers no URL');
      assert.equal(problems, []);
    } finally {
      await close();
    }
  });

  site('a copy button puts the full static link on the clipboard', async () => {
    const { page, close } = await openPage();
    try {
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.origin.url });
      await page.goto(url('/brands'));
      await page.locator('details').first().locator('summary').click();
      const button = page.getByRole('button', { name: 'Copy the link to PaperMC light logo, 64 px, WEBP' });
      await button.click();
      assert.is(await page.evaluate(() => navigator.clipboard.readText()), url('/brand/papermc/light/64.webp'));
      assert.is(await button.innerText(), 'Copied');
      const image = await fetch(url('/brand/papermc/light/64.webp'));
      assert.is(image.status, 200);
    } finally {
      await close();
    }
  });

  site.run();
}
