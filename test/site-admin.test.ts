import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningOrigin } from '../server/origin.ts';
import { pickLatest } from '../server/versions/latest.ts';
import { currentTreeDir, openTree, type Tree } from '../server/tree/open.ts';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import { axeViolations } from './axe.ts';
import { openPage as openBrowserPage, type PageOptions } from './browser-page.ts';
import { CHROMIUM_ARGS, ROOT, findProgram, makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

// The site as a server admin uses it (issue 16), in a real browser against the real origin: what
// an admin needs is visible on a phone and a desktop, light and dark, with and without JavaScript.

const PAGES = ['/', '/versions', '/versions/papermc/21'];
const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1440, height: 900 },
];
const SCHEMES = ['light', 'dark'] as const;
const SCREENSHOTS = join(ROOT, '.screenshots');

const CHROMIUM = findProgram('chromium');
if (!CHROMIUM)
  console.warn(
    'site-admin.test.ts: chromium not installed, browser tests not run (apt-get install -y chromium; .ci/run does)',
  );
else {
  const ctx = {} as { workspace: Workspace; origin: RunningOrigin; browser: Browser; tree: Tree };
  const url = (path: string) => ctx.origin.url + path;

  const openPage = (options: PageOptions = {}) => openBrowserPage(ctx.browser, options);

  /** The elements of cards and tables whose content is wider than their box (clipped or scrolling). */
  const clippedElements = (page: Page) =>
    page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('.picker, .card, .card *, .table-scroll, table, table *')]
        .filter(
          (el) =>
            el.scrollWidth > el.clientWidth &&
            !(el.closest('.table-scroll')?.querySelector('#history') && el.matches('.table-scroll')),
        )
        .map(
          (el) =>
            `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${el.className}: ${el.scrollWidth} > ${el.clientWidth}`,
        ),
    );

  /** The history's scroll box on this page: does it scroll sideways, and does the version column stay put? */
  const historyScroll = (page: Page) =>
    page.evaluate(() => {
      const box = document.querySelector('#history')?.closest<HTMLElement>('.table-scroll');
      if (!box) return undefined;
      const scrolls = box.scrollWidth > box.clientWidth;
      const version = box.querySelector<HTMLElement>('#history tbody th[scope="row"]')!;
      const before = version.getBoundingClientRect().left;
      box.scrollLeft = 200;
      const after = version.getBoundingClientRect().left;
      const moved = box.scrollLeft;
      box.scrollLeft = 0;
      return { scrolls, moved, position: getComputedStyle(version).position, shift: after - before };
    });

  const site = suite('site as a server admin uses it');
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
    'cards and tables: nothing clipped, the version column pinned on a phone, no JS-only control without JavaScript, no axe violation (390 and 1440 px, light and dark, with and without JavaScript)',
    async () => {
      for (const size of WIDTHS)
        for (const scheme of SCHEMES)
          for (const javaScript of [true, false]) {
            const { page, problems, close } = await openPage({ ...size, scheme, javaScript });
            // Without JavaScript the page's timers never fire, and axe needs them: axe checks a twin
            // of the page whose site scripts are served empty.
            const twin = javaScript ? undefined : await openPage({ ...size, scheme, siteScripts: false });
            try {
              for (const path of PAGES) {
                const where = `${path} at ${size.width} px, ${scheme}, JavaScript ${javaScript ? 'on' : 'off'}`;
                assert.is((await page.goto(url(path)))?.status(), 200, where);
                assert.equal(await clippedElements(page), [], where);
                const history = await historyScroll(page);
                if (history && size.name === 'phone') {
                  assert.ok(history.scrolls && history.moved > 0, `${where}: the history scrolls sideways on a phone`);
                  assert.is(history.position, 'sticky', where);
                  assert.ok(Math.abs(history.shift) < 1, `${where}: the version column moved ${history.shift} px`);
                } else if (history) assert.not.ok(history.scrolls, `${where}: the history fits`);
                const jsOnly = await page.evaluate(() => {
                  const all = [...document.querySelectorAll<HTMLElement>('[data-js-only]')];
                  return { all: all.length, visible: all.filter((el) => el.checkVisibility()).length };
                });
                assert.ok(jsOnly.all > 0, `${where}: the page has JS-only controls`);
                if (javaScript) assert.is(jsOnly.visible, jsOnly.all, where);
                else assert.is(jsOnly.visible, 0, `${where}: JS-only controls shown without JavaScript`);
                if (path === '/') {
                  // Every per-Java entry's SHA-256 is text on the page, there to select.
                  const shas = await page.evaluate(() =>
                    [...document.querySelectorAll<HTMLElement>('.per-java li')].map((li) => {
                      const code = li.querySelector<HTMLElement>('code.sha');
                      return code?.checkVisibility() && getComputedStyle(code).userSelect !== 'none'
                        ? code.innerText
                        : '';
                    }),
                  );
                  assert.ok(shas.length >= SERVER_SOFTWARE.length, where);
                  for (const sha of shas) assert.match(sha, /^[0-9a-f]{64}$/, where);
                }
                await twin?.page.goto(url(path));
                assert.equal(await axeViolations(twin?.page ?? page), [], where);
                // Kept to look at: every page with JavaScript, and without it in the light scheme.
                if (javaScript || scheme === 'light')
                  await page.screenshot({
                    path: join(
                      SCREENSHOTS,
                      `admin-${path.slice(1).replaceAll('/', '-') || 'downloads'}-${size.name}-${scheme}${javaScript ? '' : '-nojs'}.png`,
                    ),
                    fullPage: true,
                  });
              }
              assert.equal(problems, []);
            } finally {
              await close();
              await twin?.close();
            }
          }
    },
  );

  site('no Copy button and no search box shows without JavaScript on the other pages either', async () => {
    const { page, close } = await openPage({ javaScript: false });
    try {
      for (const path of ['/brands', '/charts', '/versions/velocity/8', '/version/plugin-1793385900000-fbf68fcdf0']) {
        await page.goto(url(path));
        const visible = await page.evaluate(
          () =>
            [...document.querySelectorAll<HTMLElement>('[data-js-only], button[data-copy], #version-search')].filter(
              (el) => el.checkVisibility(),
            ).length,
        );
        assert.is(visible, 0, path);
      }
    } finally {
      await close();
    }
  });

  site(
    'the picker at the top of the downloads page shows each software with its logo and jumps to its card',
    async () => {
      const { page, problems, close } = await openPage({ width: 390, height: 844 });
      try {
        await page.goto(url('/'), { waitUntil: 'networkidle' });
        const links = page.locator('nav.picker a');
        assert.equal(await links.allInnerTexts(), [...SERVER_SOFTWARE], 'the names, and no letter of a monogram');
        const logos = await page.evaluate(() =>
          [...document.querySelectorAll<HTMLImageElement>('nav.picker img')].map((img) => ({
            src: new URL(img.currentSrc).pathname,
            loaded: img.complete && img.naturalWidth > 0,
          })),
        );
        assert.ok(logos.length >= 6, 'the six brands of the kit');
        for (const logo of logos) {
          assert.match(logo.src, /^\/brand\/[a-z]+\/[a-z-]+\/(32|64)\.png$/);
          assert.ok(logo.loaded, logo.src);
        }
        const firstCard = await page.locator('article.card').first().boundingBox();
        assert.ok((await page.locator('nav.picker').boundingBox())!.y < firstCard!.y, 'the picker is above the cards');
        await page.getByRole('navigation', { name: 'Server software' }).getByRole('link', { name: 'Velocity' }).click();
        await page.waitForURL(url('/#velocity'));
        const card = await page.locator('article#velocity').boundingBox();
        assert.ok(card && Math.abs(card.y) < 5, `the Velocity card is at the top of the screen (${card?.y})`);
        assert.equal(problems, []);
      } finally {
        await close();
      }
    },
  );

  site("each card's main download is the newest release, never a pre-release", async () => {
    const { page, close } = await openPage();
    try {
      await page.goto(url('/'));
      const buttons = await page.$$eval('article.card a.button', (links) =>
        links.map((a) => ({ card: a.closest('article')!.id, href: a.getAttribute('href')! })),
      );
      assert.ok(buttons.length > 0);
      for (const { card, href } of buttons) {
        const software = SERVER_SOFTWARE.find((s) => s.toLowerCase() === card)!;
        const id = href.split('/').pop()!;
        assert.is(ctx.tree.catalog.byId.get(id)?.channel ?? 'release', 'release', card);
        assert.is(id, pickLatest(ctx.tree.catalog.latest, software)!.id, card);
      }
      const preRelease = ctx.tree.catalog.versions.find((v) => v.channel && v.channel !== 'release')!;
      assert.ok(
        buttons.every(({ href }) => !href.endsWith(preRelease.id)),
        'the demo pre-release is no main download',
      );
    } finally {
      await close();
    }
  });

  site('"Latest for" says what a version is the latest of, only on the version an admin would pick', async () => {
    const { page, close } = await openPage();
    const marks = () =>
      page.$$eval('#history .badge.latest', (badges) =>
        badges.map((b) => ({
          text: b.textContent,
          href: b.closest('tr')!.querySelector('th a')!.getAttribute('href'),
        })),
      );
    try {
      await page.goto(url('/versions'));
      const expected = SERVER_SOFTWARE.flatMap((software) => {
        const latest = pickLatest(ctx.tree.catalog.latest, software);
        return latest ? [{ text: `Latest for ${software}`, href: `/version/${latest.id}` }] : [];
      });
      const sort = (list: { text: string | null; href: string | null }[]) =>
        [...list].sort((a, b) => String(a.text).localeCompare(String(b.text)));
      assert.equal(sort(await marks()), sort(expected));
      await page.goto(url('/versions/papermc/21'));
      // The newest PaperMC release that runs on Java 21, whatever Java version it names.
      const pick = ctx.tree.catalog.versions.find(
        (v) =>
          v.serverSoftware.includes('PaperMC') && (v.channel ?? 'release') === 'release' && Number(v.javaVersion) <= 21,
      )!;
      assert.equal(await marks(), [{ text: 'Latest for PaperMC · Java 21', href: `/version/${pick.id}` }]);
    } finally {
      await close();
    }
  });

  site('the history search matches fields, not raw text, and its count follows the matches', async () => {
    const { page, problems, close } = await openPage();
    const shown = () =>
      page.$$eval('#history tbody tr', (rows) =>
        rows
          .filter((row) => !(row as HTMLTableRowElement).hidden)
          .map((row) => row.querySelector('th a')!.getAttribute('href')!.split('/').pop()),
      );
    const versions = ctx.tree.catalog.versions;
    const ids = (list: typeof versions) => list.map((v) => v.id);
    try {
      await page.goto(url('/versions'));
      const search = page.getByLabel('Search these versions');
      const cases = [
        // Not 1.2.0 for PaperMC, whose date holds "21": a bare number is the Java column's value.
        {
          query: 'Paper 21',
          want: versions.filter((v) => v.serverSoftware.includes('PaperMC') && v.javaVersion === '21'),
        },
        { query: 'java 21', want: versions.filter((v) => Number(v.javaVersion) <= 21) },
        { query: 'java 11', want: versions.filter((v) => Number(v.javaVersion) <= 11) },
        {
          query: 'velocity 1.2',
          want: versions.filter((v) => v.serverSoftware.includes('Velocity') && v.pluginVersion.startsWith('1.2.')),
        },
        {
          query: '1.21',
          want: versions.filter((v) => (v.minecraftVersion ?? v.proxyVersion ?? '').startsWith('1.21')),
        },
        { query: 'beta', want: versions.filter((v) => v.channel === 'beta') },
      ];
      assert.ok(
        versions.some(
          (v) => v.serverSoftware.includes('PaperMC') && v.javaVersion !== '21' && v.createdAt.includes('21'),
        ),
        'the demo data has a PaperMC build of another Java dated on a 21st',
      );
      for (const { query, want } of cases) {
        assert.ok((want.length > 0 && want.length < versions.length) || query === 'java 21', query);
        await search.fill(query);
        assert.equal(await shown(), ids(want), query);
        assert.is(
          await page.locator('#history-count').innerText(),
          `${want.length} of ${versions.length} versions`,
          query,
        );
        assert.is(
          await page.locator('#version-search-count').innerText(),
          `${want.length} of ${versions.length} shown`,
          query,
        );
      }
      await search.fill('purpur 9.9');
      assert.equal(await shown(), []);
      assert.is(await page.locator('#version-search-count').innerText(), 'No version matches “purpur 9.9”.');
      assert.not.ok(await page.locator('#history').isVisible(), 'no empty table head under the message');
      await search.fill('');
      assert.is((await shown()).length, versions.length);
      assert.is(await page.locator('#history-count').innerText(), `${versions.length} versions`);
      assert.ok(await page.locator('#history').isVisible());
      assert.equal(problems, []);
    } finally {
      await close();
    }
  });

  site('a copy button says "Copied" in a live region, and copies the text', async () => {
    const { page, problems, close } = await openPage();
    try {
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.origin.url });
      await page.goto(url('/'));
      const status = page.locator('[role="status"]#copy-status');
      assert.is(await status.innerText(), '');
      const entry = page.locator('#papermc .per-java li').first();
      await entry.getByRole('button').click();
      await page.waitForFunction(() => document.getElementById('copy-status')?.textContent === 'Copied');
      assert.is(await page.evaluate(() => navigator.clipboard.readText()), await entry.locator('code.sha').innerText());
      assert.equal(problems, []);
    } finally {
      await close();
    }
  });

  // The depot's own mark as favicon, for a depot without data/project.json: test/project.test.ts.
  site(
    "each page has exactly one aria-current, and its favicon and Apple touch icon are the project's icon",
    async () => {
      const { page, close } = await openPage();
      try {
        for (const path of [...PAGES, '/versions/all/21', '/versions/papermc/all', '/brands', '/reference']) {
          await page.goto(url(path));
          const current = await page.$$eval('[aria-current]', (elements) =>
            elements.map((el) => `${el.getAttribute('aria-current')} ${el.getAttribute('href')}`),
          );
          assert.equal(current, [`page ${path}`], path);
          const icons = await page.$$eval('link[rel="icon"], link[rel="apple-touch-icon"]', (links) =>
            links.map(
              (link) => `${link.getAttribute('rel')} ${link.getAttribute('href')} ${link.getAttribute('sizes')}`,
            ),
          );
          assert.equal(
            icons,
            ['icon /api/project/icon/32.png 32x32', 'apple-touch-icon /api/project/icon/180.png 180x180'],
            path,
          );
        }
        // Both are in the tree and decode at the size the page declares.
        for (const size of [32, 180]) {
          const answer = await fetch(url(`/api/project/icon/${size}.png`));
          assert.is(answer.status, 200, `${size}`);
          const meta = await sharp(Buffer.from(await answer.arrayBuffer())).metadata();
          assert.equal([meta.format, meta.width, meta.height], ['png', size, size]);
        }
      } finally {
        await close();
      }
    },
  );

  site(
    "the header shows the project's icon and name, nothing clipped or overflowing, its navigation usable (390 and 1440 px)",
    async () => {
      for (const size of WIDTHS) {
        const { page, problems, close } = await openPage(size);
        try {
          for (const path of ['/', '/versions/papermc/21']) {
            const where = `${path} at ${size.width} px`;
            await page.goto(url(path), { waitUntil: 'networkidle' });
            const header = await page.evaluate(() => {
              const logo = document.querySelector<HTMLAnchorElement>('.site-header a.logo')!;
              const icon = logo.querySelector<HTMLImageElement>('img.project-icon');
              // No named functions in here: tsx would wrap them in a helper the page does not have.
              const width = document.documentElement.clientWidth;
              const nav = [...document.querySelectorAll<HTMLAnchorElement>('.site-header nav a')];
              const parts = [logo, ...(icon ? [icon] : []), ...nav];
              return {
                name: logo.innerText.trim(),
                icon: icon && {
                  loaded: icon.complete && icon.naturalWidth > 0,
                  width: icon.getBoundingClientRect().width,
                },
                pageOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
                clipped: [document.querySelector('.site-header')!, ...document.querySelectorAll('.site-header *')]
                  .filter((el) => el.scrollWidth > el.clientWidth)
                  .map((el) => `${el.tagName.toLowerCase()}.${el.className}`),
                outside: parts
                  .filter((el) => el.getBoundingClientRect().left < 0 || el.getBoundingClientRect().right > width)
                  .map((el) => el.innerText || el.tagName),
                // Each link is the element at its own centre: nothing covers it, so a tap reaches it.
                covered: nav
                  .filter((a) => {
                    const r = a.getBoundingClientRect();
                    return !a.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
                  })
                  .map((a) => a.innerText),
                navLinks: nav.length,
              };
            });
            assert.is(header.name, 'DepotDemo', where);
            assert.ok(header.icon?.loaded, `${where}: the icon is shown`);
            assert.is(header.icon!.width, 32, where);
            assert.is(header.pageOverflow, 0, `${where}: the page scrolls sideways`);
            assert.equal(header.clipped, [], `${where}: clipped`);
            assert.equal(header.outside, [], `${where}: outside the screen`);
            assert.equal(header.covered, [], `${where}: covered`);
            assert.is(header.navLinks, 6, where);
            await page.locator('.site-header').screenshot({
              path: join(SCREENSHOTS, `header-${path.slice(1).replaceAll('/', '-') || 'downloads'}-${size.name}.png`),
            });
          }
          // The navigation works: a tap on a link opens its page, and the logo leads home.
          await page.locator('.site-header nav').getByRole('link', { name: 'Brand kit' }).click();
          await page.waitForURL(url('/brands'));
          await page.locator('.site-header a.logo').click();
          await page.waitForURL(url('/'));
          assert.equal(problems, []);
        } finally {
          await close();
        }
      }
    },
  );

  site.run();
}
