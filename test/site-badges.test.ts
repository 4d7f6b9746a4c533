import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import type { DownloadCounts } from '../server/downloads/counts.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { createFileStorage, type Storage } from '../server/storage.ts';
import { axeViolations } from './axe.ts';
import { openPage as openBrowserPage, type PageOptions } from './browser-page.ts';
import {
  CHROMIUM_ARGS,
  ROOT,
  SHARED_BUILD_CACHE,
  findProgram,
  makeAccounts,
  makeWorkspace,
  startTestOrigin,
  until,
  type Accounts,
  type Workspace,
} from './helpers.ts';

// Issue 17 on the site, in a real browser against the real origin: the badges page (each kind's
// image decoded, its snippets with this site's address, the style picker) and the live download
// counts on the downloads page, a version page and the history, at 390 and 1440 px, light and dark,
// with and without JavaScript.

const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1440, height: 900 },
];
const SCHEMES = ['light', 'dark'] as const;
const SCREENSHOTS = join(ROOT, '.screenshots');
/** The kinds the page shows an image of as it loads; the players badge waits for a server id. */
const KINDS = ['badge-latest', 'badge-latest-java', 'badge-downloads'];

const CHROMIUM = findProgram('chromium');
if (!CHROMIUM)
  console.warn(
    'site-badges.test.ts: chromium not installed, browser tests not run (apt-get install -y chromium; .ci/run does)',
  );
else {
  const ctx = {} as {
    workspace: Workspace;
    accounts: Accounts;
    storage: Storage;
    origin: RunningOrigin;
    browser: Browser;
    /** The version latest/papermc answers: downloaded 3 times by its own link and 2 through latest. */
    paper: string;
  };
  const url = (path: string) => ctx.origin.url + path;

  const openPage = (options: PageOptions = {}) => openBrowserPage(ctx.browser, options);

  /** Elements whose content is wider than their box. */
  const clippedElements = (page: Page) =>
    page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('body, .site-header *, main, main *')]
        .filter((el) => el.scrollWidth > el.clientWidth && el.clientWidth > 0)
        .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}: ${el.scrollWidth} > ${el.clientWidth}`),
    );

  /** Each kind's preview: shown, loaded and decoded (naturalWidth > 0), and its src. */
  const previews = (page: Page) =>
    page.evaluate(() =>
      Object.fromEntries(
        [...document.querySelectorAll<HTMLElement>('[data-badge-kind]')].map((kind) => {
          const img = kind.querySelector<HTMLImageElement>('img[data-badge-preview]')!;
          return [
            kind.id,
            {
              shown: img.checkVisibility(),
              decoded: img.complete && img.naturalWidth > 0,
              width: img.naturalWidth,
              src: img.src,
            },
          ];
        }),
      ),
    );
  const snippet = (page: Page, kind: string, form: 'markdown' | 'html') =>
    page.locator(`#${kind} [data-badge-snippet="${form}"] code`).textContent();
  const copied = (page: Page, kind: string, form: 'markdown' | 'html') =>
    page.locator(`#${kind} [data-badge-snippet="${form}"] button[data-copy]`).getAttribute('data-copy');
  const allDecoded = (page: Page, kinds: string[]) =>
    until(
      async () => {
        const shown = await previews(page);
        return kinds.every((kind) => shown[kind]?.decoded);
      },
      `previews of ${kinds.join(', ')} decoded`,
    );

  const site = suite('badges page and download counts in a browser');
  site.before(async () => {
    // Users and servers first, with the API alone; then one build with the site.
    ctx.workspace = await makeWorkspace({ build: false, site: true });
    ctx.accounts = await makeAccounts(ctx.workspace, { SITE: 'off' });
    const { dataDir, distDir } = ctx.workspace;
    await runBuild({ dataDir, distDir, cacheDir: SHARED_BUILD_CACHE, site: true });
    ctx.storage = createFileStorage(ctx.workspace.storageDir);
    // The origin believes X-Forwarded-For from loopback, so each download can name its client.
    ctx.origin = await startTestOrigin(ctx.workspace, {
      storage: ctx.storage,
      trustProxy: ['127.0.0.1'],
      chartUrlKeys: ['site-badges-test-key-of-32-chars!'],
    });
    const latest = await fetch(url('/api/plugin-versions/latest/papermc'));
    ctx.paper = ((await latest.json()) as { version: { id: string } }).version.id;
    const downloads = [
      ...['10.0.0.1', '10.0.0.2', '10.0.0.3'].map((client) => [`/api/plugin-versions/download/${ctx.paper}`, client]),
      ...['10.0.0.4', '10.0.0.5'].map((client) => ['/api/plugin-versions/download/latest/papermc', client]),
    ];
    for (const [path, client] of downloads) {
      const response = await fetch(url(path!), { headers: { 'x-forwarded-for': client! } });
      await response.arrayBuffer();
      assert.is(response.status, 200, path);
    }
    await until(async () => {
      const counts = (await (await fetch(url('/api/plugin-versions/downloads'))).json()) as DownloadCounts;
      return counts.total === 5;
    }, 'the 5 downloads counted');
    ctx.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    await mkdir(SCREENSHOTS, { recursive: true });
  });
  site.after(async () => {
    await ctx.browser?.close();
    await ctx.origin?.close();
    await ctx.storage?.dispose();
    await ctx.workspace?.remove();
  });

  site(
    'badges page: each badge decoded, snippets with the absolute URLs, nothing clipped, no JS-only control without JavaScript, no axe violation (390 and 1440 px, light and dark, with and without JavaScript)',
    async () => {
      for (const size of WIDTHS)
        for (const scheme of SCHEMES)
          for (const javaScript of [true, false]) {
            const where = `/badges at ${size.width} px, ${scheme}, JavaScript ${javaScript ? 'on' : 'off'}`;
            const { page, problems, close } = await openPage({ ...size, scheme, javaScript });
            // Without JavaScript axe checks a twin of the page whose site scripts are served empty.
            const twin = javaScript ? undefined : await openPage({ ...size, scheme, siteScripts: false });
            try {
              assert.is((await page.goto(url('/badges')))?.status(), 200, where);
              assert.is(await page.locator('nav[aria-label="Site"] a[aria-current="page"]').textContent(), 'Badges');
              await allDecoded(page, KINDS);
              const shown = await previews(page);
              assert.ok(
                KINDS.every((kind) => shown[kind]!.shown),
                where,
              );
              assert.not.ok(shown['badge-players']!.shown, `${where}: no players image before a server id`);
              const base = javaScript ? ctx.origin.url : '';
              assert.is(
                await snippet(page, 'badge-latest', 'markdown'),
                `![Latest PaperMC version](${base}/api/badges/latest/papermc.svg)`,
                where,
              );
              assert.is(
                await snippet(page, 'badge-downloads', 'html'),
                `<img alt="Downloads" src="${base}/api/badges/downloads.svg">`,
                where,
              );
              assert.is(
                await snippet(page, 'badge-players', 'markdown'),
                `![Players online](${base}/api/badges/players/<server-id>.svg)`,
                where,
              );
              if (javaScript)
                assert.is(
                  await copied(page, 'badge-latest', 'html'),
                  `<img alt="Latest PaperMC version" src="${base}/api/badges/latest/papermc.svg">`,
                );
              assert.equal(await clippedElements(page), [], where);
              const jsOnly = await page.evaluate(() => {
                const all = [...document.querySelectorAll<HTMLElement>('[data-js-only]')];
                return { all: all.length, visible: all.filter((el) => el.checkVisibility()).length };
              });
              assert.ok(jsOnly.all > 0, where);
              if (!javaScript) assert.is(jsOnly.visible, 0, `${where}: JS-only controls shown without JavaScript`);
              else assert.ok(await page.locator('#badge-style').isVisible(), `${where}: the style picker shows`);
              await page.screenshot({
                path: join(SCREENSHOTS, `badges-${size.name}-${scheme}-js-${javaScript ? 'on' : 'off'}.png`),
                fullPage: true,
              });
              await twin?.page.goto(url('/badges'));
              assert.equal(await axeViolations(twin?.page ?? page), [], where);
              assert.equal(problems, [], where);
            } finally {
              await close();
              await twin?.close();
            }
          }
    },
  );

  site(
    'the style picker and the pickers redraw previews, snippets and links; a server id shows its players badge',
    async () => {
      const { page, problems, close } = await openPage();
      try {
        await page.goto(url('/badges'));
        await allDecoded(page, KINDS);
        const flat = await previews(page);
        await page.getByLabel('for-the-badge').check();
        await until(async () => {
          const now = await previews(page);
          return KINDS.every((kind) => now[kind]!.src.endsWith('.svg?style=for-the-badge') && now[kind]!.decoded);
        }, 'previews redrawn in for-the-badge');
        const styled = await previews(page);
        for (const kind of KINDS) assert.ok(styled[kind]!.width > flat[kind]!.width, `${kind}: for-the-badge is wider`);
        const json = `${ctx.origin.url}/api/badges/downloads.json`;
        assert.is(
          await snippet(page, 'badge-downloads', 'markdown'),
          `![Downloads](${ctx.origin.url}/api/badges/downloads.svg?style=for-the-badge)`,
        );
        const link = (kind: string, form: string) =>
          page.locator(`#${kind} a[data-badge-link="${form}"]`).getAttribute('href');
        assert.is(
          await link('badge-downloads', 'png'),
          `${ctx.origin.url}/api/badges/downloads.png?style=for-the-badge`,
        );
        assert.is(await link('badge-downloads', 'json'), json);
        assert.is(
          await link('badge-downloads', 'shields'),
          `https://img.shields.io/endpoint?url=${encodeURIComponent(json)}&style=for-the-badge`,
        );
        // The PNG and JSON links answer what they name.
        const png = await fetch((await link('badge-downloads', 'png'))!);
        assert.is(png.headers.get('content-type'), 'image/png');
        const endpoint = (await (await fetch(json)).json()) as { message: string };
        assert.is(endpoint.message, '5');

        // Software x Java: each combination the catalog has, picked from a list.
        const options = await page
          .locator('#badge-latest-java-choice option')
          .evaluateAll((all) => all.map((option) => (option as HTMLOptionElement).value));
        assert.ok(options.length > 1 && options.every((path) => /^\/api\/badges\/latest\/[a-z]+\/\d+$/.test(path)));
        await page.selectOption('#badge-latest-java-choice', options.at(-1)!);
        assert.ok(
          (await snippet(page, 'badge-latest-java', 'html'))!.includes(`${options.at(-1)}.svg?style=for-the-badge"`),
        );
        await allDecoded(page, ['badge-latest-java']);

        // Players: a public server's id typed in draws its badge.
        const id = ctx.accounts.publicServer.id;
        await page.fill('#badge-players-server', id);
        await allDecoded(page, ['badge-players']);
        assert.is(
          await snippet(page, 'badge-players', 'markdown'),
          `![Players online](${ctx.origin.url}/api/badges/players/${id}.svg?style=for-the-badge)`,
        );
        await page.screenshot({ path: join(SCREENSHOTS, 'badges-picked.png'), fullPage: true });
        assert.equal(problems, []);
      } finally {
        await close();
      }
    },
  );

  site(
    'download counts: on the software card, the version page and the history; hidden without JavaScript or when the counts fail',
    async () => {
      for (const size of WIDTHS)
        for (const scheme of SCHEMES) {
          const { page, problems, close } = await openPage({ ...size, scheme });
          const where = `at ${size.width} px, ${scheme}`;
          try {
            await page.goto(url('/'));
            const card = page.locator('#papermc [data-downloads]');
            await card.waitFor({ state: 'visible' });
            assert.is(
              (await card.textContent())!.replace(/\s+/g, ' ').trim(),
              '5 downloads of all PaperMC builds',
              where,
            );
            assert.equal(await clippedElements(page), [], where);

            await page.goto(url(`/version/${ctx.paper}`));
            const line = page.locator('main [data-downloads]');
            await line.waitFor({ state: 'visible' });
            assert.is(
              (await line.textContent())!.replace(/\s+/g, ' ').trim(),
              "5 downloads 3 by its own link, 2 through PaperMC's latest or resolve link.",
              where,
            );
            assert.equal(await clippedElements(page), [], where);

            await page.goto(url('/versions'));
            const cell = page.locator(`#history td[data-downloads-versions="${ctx.paper}"]`);
            await cell.waitFor({ state: 'visible' });
            assert.is(await cell.textContent(), '5', where);
            assert.ok(await page.locator('#history th[data-downloads]').isVisible(), where);
            await page.screenshot({
              path: join(SCREENSHOTS, `counts-history-${size.name}-${scheme}.png`),
              fullPage: true,
            });
            assert.equal(await axeViolations(page), [], where);
            assert.equal(problems, [], where);
          } finally {
            await close();
          }
        }

      // Without JavaScript, and when the counts do not come: nothing of them shows.
      for (const failing of [false, true]) {
        const { page, close } = await openPage({ javaScript: failing });
        if (failing) await page.route('**/api/plugin-versions/downloads', (route) => route.abort());
        try {
          for (const path of ['/', `/version/${ctx.paper}`, '/versions']) {
            await page.goto(url(path));
            if (failing) await page.waitForLoadState('networkidle');
            const shown = await page.evaluate(
              () =>
                [...document.querySelectorAll<HTMLElement>('[data-downloads], [data-downloads-versions]')].filter(
                  (el) => el.checkVisibility(),
                ).length,
            );
            assert.is(shown, 0, `${path}: counts shown ${failing ? 'after a failed request' : 'without JavaScript'}`);
          }
        } finally {
          await close();
        }
      }
    },
  );

  site(
    "the chart playground's data and signed-URL snippets name this site and the typed server, and work as written",
    async () => {
      const { page, problems, close } = await openPage();
      const id = ctx.accounts.publicServer.id;
      try {
        await page.goto(url('/charts'));
        await page.getByLabel('Days').fill('2');
        await page.getByLabel("Your server's id").fill(id);
        const chartUrl = `${ctx.origin.url}/api/servers/${id}/chart/players`;
        await page.waitForFunction(
          (expected) => document.getElementById('cp-json')?.textContent === expected,
          `curl '${chartUrl}?days=2&format=json'`,
        );
        assert.is(await page.locator('#cp-csv').textContent(), `curl '${chartUrl}?days=2&format=csv'`);
        // The requests answer in the shape the examples below them show.
        const json = (await (await fetch(`${chartUrl}?days=2&format=json`)).json()) as {
          period: string;
          points: unknown[];
        };
        assert.is(json.period, 'hour');
        assert.is(json.points.length, 48);
        const csv = await (await fetch(`${chartUrl}?days=2&format=csv`)).text();
        assert.is(csv.split('\r\n')[0], 'time,peak,average');
        assert.match((await page.locator('#cp-json-example').textContent())!, '"period": "day"');
        assert.match((await page.locator('#cp-csv-example').textContent())!, /^time,peak,average\n\d{4}-/);

        assert.is(
          await page.locator('#cp-signed-command').textContent(),
          `npm run depot -- chart-url ${id} --days 7 --expires 30d`,
        );
        const request = (await page.locator('#cp-signed-request').textContent())!;
        const target = /'(http[^']+)'$/.exec(request)?.[1];
        const body = /-d '([^']+)'/.exec(request)?.[1];
        assert.is(target, `${ctx.origin.url}/api/servers/${id}/chart-urls`);
        const minted = await fetch(target!, {
          method: 'POST',
          headers: { authorization: `Bearer ${ctx.accounts.owner}`, 'content-type': 'application/json' },
          body: body!,
        });
        assert.is(minted.status, 200);
        // The URL is under PUBLIC_URL (the test origin's default names another port): asked of this origin.
        const signed = new URL(((await minted.json()) as { url: string }).url);
        const chart = await fetch(url(signed.pathname + signed.search));
        assert.is(chart.status, 200);
        assert.is(chart.headers.get('content-type'), 'image/svg+xml');
        assert.equal(problems, []);
      } finally {
        await close();
      }
    },
  );

  site.run();
}
