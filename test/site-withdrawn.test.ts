import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { successorOf } from '../server/versions/latest.ts';
import { presentVersion } from '../server/versions/present.ts';
import type { PluginVersion } from '../server/versions/schema.ts';
import { axeViolations } from './axe.ts';
import { openPage } from './browser-page.ts';
import {
  CHROMIUM_ARGS,
  ROOT,
  SHARED_BUILD_CACHE,
  findProgram,
  makeWorkspace,
  startTestOrigin,
  type Workspace,
} from './helpers.ts';

// Issue 29 on the human site: a withdrawn version, written into a copy of the demo data as the
// operator's withdraw writes it and built, in a real browser against the real origin at phone and
// desktop widths: the warning with its reason on the version page, the history's row, and the
// download cards that no longer offer it. Then restored: the pages are as before.

/** The demo data's 1.4.0 for PaperMC and Purpur on Java 17: their newest release for Java 17 and 21 servers. */
const WITHDRAWN = 'plugin-1789470000000-7f26410443';
/** 2.0.0 for PaperMC, Folia and Purpur on Java 25 (issue 39): the newest PaperMC release, withdrawn or not. */
const NEXT_PAPER = 'plugin-1795514400000-cd8206ff60';
/** Free text as an operator may type it: markup, a CDATA end and quotes must show as written. */
const REASON = `Corrupts worlds on save: <script>alert("withdrawn")</script> ]]> "quoted" & 'single' </blockquote>`;
const WITHDRAWAL = { reason: REASON, at: '2026-10-01T12:30:00.000Z', by: 'alice' };
const SIZES = [
  { name: 'phone', width: 390, height: 844, scheme: 'light' },
  { name: 'desktop', width: 1440, height: 900, scheme: 'dark' },
] as const;
const SCREENSHOTS = join(ROOT, '.screenshots');

/** The page's own overflow and the boxes wider than they are (the warning, the history's box). */
const MEASURE = `(() => ({
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  clipped: [...document.querySelectorAll('.withdrawn-notice, .card, pre')]
    .filter((e) => e.scrollWidth > e.clientWidth)
    .map((e) => (e.id || e.className) + ': ' + e.scrollWidth + ' > ' + e.clientWidth),
}))()`;

const CHROMIUM = findProgram('chromium');
if (!CHROMIUM)
  console.warn(
    'site-withdrawn.test.ts: chromium not installed, browser tests not run (apt-get install -y chromium; .ci/run does)',
  );
else {
  const ctx = {} as {
    workspace: Workspace;
    origin: RunningOrigin;
    browser: Browser;
    original: string;
    withdrawn: PluginVersion;
    next: PluginVersion;
    successor: PluginVersion;
  };
  const recordFile = () => join(ctx.workspace.dataDir, 'versions', `${WITHDRAWN}.json`);
  const build = () =>
    runBuild({ dataDir: ctx.workspace.dataDir, distDir: ctx.workspace.distDir, cacheDir: SHARED_BUILD_CACHE });
  const url = (path: string) => ctx.origin.url + path;
  const measure = async (page: Page) => (await page.evaluate(MEASURE)) as { overflow: number; clipped: string[] };

  const site = suite('a withdrawn version on the site');
  site.before(async () => {
    // The site is built first as it is, so that the withdrawal below must build its pages again.
    ctx.workspace = await makeWorkspace({ site: true });
    ctx.original = await readFile(recordFile(), 'utf8');
    await writeFile(recordFile(), JSON.stringify({ ...JSON.parse(ctx.original), withdrawn: WITHDRAWAL }, null, 2));
    await build();
    const { catalog } = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
    const present = (id: string) => presentVersion(catalog, catalog.byId.get(id)!, true);
    ctx.withdrawn = present(WITHDRAWN);
    ctx.next = present(NEXT_PAPER);
    ctx.successor = presentVersion(catalog, successorOf(catalog.latest, catalog.byId.get(WITHDRAWN)!)!, true);
    ctx.origin = await startTestOrigin(ctx.workspace);
    ctx.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    await mkdir(SCREENSHOTS, { recursive: true });
  });
  site.after(async () => {
    await ctx.browser?.close();
    await ctx.origin?.close();
    await ctx.workspace?.remove();
  });

  site(
    'the version page: the warning with its reason and date, the successor first, its own file secondary',
    async () => {
      assert.is(ctx.successor.pluginVersion, '1.2.0', 'the PaperMC release on Java 17 before 1.4.0');
      for (const size of SIZES) {
        const { page, problems, close } = await openPage(ctx.browser, size);
        const where = `${size.width} px`;
        try {
          await page.goto(url(`/version/${WITHDRAWN}`));
          await page.waitForLoadState('networkidle');
          const notice = page.locator('#withdrawn');
          assert.ok(await notice.isVisible(), where);
          assert.match(await page.locator('h1').innerText(), /withdrawn/i, where);
          assert.is((await notice.locator('.withdrawn-reason').innerText()).trim(), REASON, where);
          assert.is(await notice.locator('time').getAttribute('datetime'), WITHDRAWAL.at, where);
          assert.match(await notice.innerText(), /2026-10-01 by alice/, where);
          // Before the facts: read first.
          const top = async (selector: string) => (await page.locator(selector).boundingBox())!.y;
          // Above every list of facts: the version's, and what its JAR declares (issue 31).
          const firstFacts = await page
            .locator('.facts')
            .evaluateAll((lists) => Math.min(...lists.map((list) => list.getBoundingClientRect().top)));
          assert.ok((await top('#withdrawn')) < firstFacts, `${where}: the warning above the facts`);
          // The main action is the successor's download; the withdrawn file is reachable only behind the warning, quiet.
          const primary = notice.locator('[data-successor-download]');
          assert.is(await primary.getAttribute('href'), ctx.successor.downloadUrl, where);
          assert.match(await notice.innerText(), /move to 1\.2\.0 for PaperMC, Folia, Purpur on Java 17/, where);
          const own = page.locator(`main a[href="${ctx.withdrawn.downloadUrl}"]`);
          assert.is(await own.count(), 1, `${where}: one link to the withdrawn file`);
          assert.is(
            await notice.locator(`a[href="${ctx.withdrawn.downloadUrl}"]`).count(),
            1,
            `${where}: inside the warning`,
          );
          const background = (locator: typeof own) => locator.evaluate((a) => getComputedStyle(a).backgroundColor);
          assert.is(await background(own), 'rgba(0, 0, 0, 0)', `${where}: the withdrawn download is not filled`);
          assert.is.not(await background(primary), 'rgba(0, 0, 0, 0)', `${where}: the successor's download is`);
          const order = await notice
            .locator('.withdrawn-actions a')
            .evaluateAll((links) => links.map((a) => a.dataset));
          assert.ok('successorDownload' in order[0]!, `${where}: the successor's download comes first`);
          const report = await measure(page);
          assert.equal(report.clipped, [], where);
          assert.ok(report.overflow <= 0, `${where}: the page is ${report.overflow} px wider than the screen`);
          assert.equal(await axeViolations(page), [], where);
          assert.equal(problems, [], where);
          await page.screenshot({ path: join(SCREENSHOTS, `withdrawn-version-${size.name}.png`), fullPage: true });
        } finally {
          await close();
        }
      }
    },
  );

  site('free text is text: the reason in the HTML is escaped; the description says withdrawn', async () => {
    for (const path of [`/version/${WITHDRAWN}`, '/versions']) {
      const html = await (await fetch(url(path))).text();
      assert.not.ok(html.includes('<script>alert'), path);
      assert.not.ok(html.includes(REASON), `${path}: never as written`);
      assert.ok(html.includes('&lt;script&gt;alert('), path);
      assert.not.ok(html.includes(']]>'), `${path}: no CDATA end`);
    }
    const { page, close } = await openPage(ctx.browser);
    try {
      await page.goto(url(`/version/${WITHDRAWN}`));
      const description = await page.locator('meta[name="description"]').getAttribute('content');
      assert.ok(description?.startsWith('Withdrawn, do not install: Plugin 1.4.0 '), description ?? 'no description');
      assert.is(await page.locator('script', { hasText: 'alert' }).count(), 0, 'no script made of the reason');
    } finally {
      await close();
    }
  });

  site('the history marks the row with its reason, never as latest, its download quiet', async () => {
    for (const size of SIZES) {
      const { page, problems, close } = await openPage(ctx.browser, size);
      const where = `${size.width} px`;
      try {
        await page.goto(url('/versions'));
        await page.waitForLoadState('networkidle');
        const row = page.locator('#history tbody tr.withdrawn');
        assert.is(await row.count(), 1, where);
        assert.is(await row.locator('th a').getAttribute('href'), `/version/${WITHDRAWN}`, where);
        assert.ok(await row.locator('.badge.withdrawn').isVisible(), where);
        assert.ok(await row.locator('.withdrawn-reason').isVisible(), where);
        assert.match((await row.locator('.withdrawn-reason').textContent()) ?? '', /^Withdrawn 2026-10-01: /, where);
        assert.ok((await row.locator('.withdrawn-reason').textContent())!.endsWith(REASON), where);
        assert.is(await row.locator('.badge.latest').count(), 0, `${where}: not latest for anything`);
        const latestPaper = page.locator('#history tbody tr', {
          has: page.locator('.badge.latest', { hasText: /^Latest for PaperMC$/ }),
        });
        assert.is(await latestPaper.locator('th a').getAttribute('href'), `/version/${NEXT_PAPER}`, where);
        const download = row.locator(`a[href="${ctx.withdrawn.downloadUrl}"]`);
        assert.is(await download.getAttribute('class'), 'withdrawn-download', where);
        assert.is(await download.getAttribute('aria-label'), `Withdrawn: download ${ctx.withdrawn.fileName}`, where);
        const report = await measure(page);
        assert.ok(report.overflow <= 0, `${where}: the page is ${report.overflow} px wider than the screen`);
        if (size.name === 'phone') assert.equal(await axeViolations(page), [], where);
        assert.equal(problems, [], where);
        await page.screenshot({ path: join(SCREENSHOTS, `withdrawn-history-${size.name}.png`), fullPage: true });
      } finally {
        await close();
      }
    }
  });

  site('the download cards offer the latest version that is not withdrawn', async () => {
    const { page, close } = await openPage(ctx.browser);
    try {
      await page.goto(url('/'));
      for (const software of ['PaperMC', 'Purpur']) {
        const card = page.locator(`#${software.toLowerCase()}`);
        assert.is(await card.locator(`[data-download="${software}"]`).getAttribute('href'), ctx.next.downloadUrl);
        assert.is(await card.locator(`a[href*="${WITHDRAWN}"]`).count(), 0, software);
        assert.not.match(await card.innerText(), /1\.4\.0/, software);
      }
      const java17 = page.locator('#papermc .per-java li', { hasText: 'Java 17+' });
      assert.is(await java17.locator('a').first().innerText(), '1.2.0');
    } finally {
      await close();
    }
  });

  site('restored: the pages are built again and show it as before, latest again', async () => {
    await writeFile(recordFile(), ctx.original);
    await build();
    await ctx.origin.close();
    ctx.origin = await startTestOrigin(ctx.workspace);
    const page = await (await fetch(url(`/version/${WITHDRAWN}`))).text();
    assert.not.match(page, /id="withdrawn"|badge withdrawn/);
    assert.match(page, new RegExp(`class="button" href="${ctx.withdrawn.downloadUrl}"`));
    const history = await (await fetch(url('/versions'))).text();
    assert.not.match(history, /withdrawn/i);
    const home = await (await fetch(url('/'))).text();
    assert.match(home, new RegExp(`class="per-java-download" href="${ctx.withdrawn.downloadUrl}"`));
  });

  site.run();
}
