import { chromium, type Browser, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningOrigin } from '../server/origin.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import type { PluginVersionRecord } from '../server/versions/schema.ts';
import { JAVA_VERSIONS } from '../server/versions/java.ts';
import { openPage } from './browser-page.ts';
import { CHROMIUM_ARGS, findProgram, makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

// Issue 31: Waterfall is end of life. Its entries on the built site (its download card, its
// history pages, the pages of its builds) say so with a link to Velocity, in a real browser against
// the real origin; no other software's entry does. The facts are written here as Waterfall's own
// README states them (github.com/PaperMC/Waterfall: end of life since March 2024, use Velocity),
// not read from the code, and checked equal to the API's endOfLife.

const NOTE = 'Waterfall reached end of life in March 2024; its maintainers recommend Velocity (Velocity’s own site).';
const VELOCITY_PAGE = '/versions/velocity/all';
const VELOCITY_SITE = 'https://papermc.io/software/velocity';
const SIZES = [
  { width: 390, height: 844 },
  { width: 1440, height: 900 },
] as const;

const CHROMIUM = findProgram('chromium');
if (!CHROMIUM)
  console.warn(
    'site-end-of-life.test.ts: chromium not installed, browser tests not run (apt-get install -y chromium; .ci/run does)',
  );
else {
  const ctx = {} as { workspace: Workspace; origin: RunningOrigin; browser: Browser; versions: PluginVersionRecord[] };
  const url = (path: string) => ctx.origin.url + path;
  const isWaterfall = (v: PluginVersionRecord) => v.serverSoftware.includes('Waterfall');

  const site = suite("Waterfall's end of life on the site");
  site.before(async () => {
    ctx.workspace = await makeWorkspace({ site: true });
    ctx.versions = [...(await openTree((await currentTreeDir(ctx.workspace.distDir))!)).catalog.versions];
    ctx.origin = await startTestOrigin(ctx.workspace);
    ctx.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  site.after(async () => {
    await ctx.browser?.close();
    await ctx.origin?.close();
    await ctx.workspace?.remove();
  });

  /** The end-of-life notes a page shows: their text (whitespace as read) and links. */
  async function notesOf(page: Page, path: string) {
    const answer = await page.goto(url(path));
    assert.is(answer?.status(), 200, path);
    const notes = page.locator('.end-of-life');
    const found: { text: string; links: (string | null)[]; visible: boolean; inCard: string | undefined }[] = [];
    for (const note of await notes.all())
      found.push({
        text: (await note.innerText()).replace(/\s+/g, ' ').trim(),
        links: await note.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href'))),
        visible: await note.isVisible(),
        inCard: await note.evaluate((e) => e.closest('.card')?.id),
      });
    return found;
  }

  site(
    "Waterfall's card, history pages and builds' pages say it, with links to Velocity here and on its site",
    async () => {
      const waterfallBuilds = ctx.versions.filter(isWaterfall);
      assert.is(waterfallBuilds.length, 2, "the demo data's two BungeeCord and Waterfall builds");
      const pages = [
        '/versions/waterfall/all',
        ...JAVA_VERSIONS.map((java) => `/versions/waterfall/${java}`),
        ...waterfallBuilds.map((v) => `/version/${v.id}`),
      ];
      for (const size of SIZES) {
        const { page, problems, close } = await openPage(ctx.browser, size);
        try {
          const home = await notesOf(page, '/');
          assert.equal(
            home,
            [{ text: NOTE, links: [VELOCITY_PAGE, VELOCITY_SITE], visible: true, inCard: 'waterfall' }],
            `${size.width} px: one note, in Waterfall's card`,
          );
          for (const path of pages) {
            const notes = await notesOf(page, path);
            assert.equal(notes, [{ ...home[0]!, inCard: undefined }], `${size.width} px ${path}`);
            const overflow = await page.locator('.end-of-life').evaluate((e) => e.scrollWidth - e.clientWidth);
            assert.ok(overflow <= 0, `${size.width} px ${path}: the note fits its box`);
          }
          assert.equal(problems, []);
        } finally {
          await close();
        }
      }
      assert.is((await fetch(url(VELOCITY_PAGE))).status, 200, "the site's Velocity page exists");
    },
  );

  site('no other entry says it: the other softwares, the unfiltered pages, the other builds', async () => {
    const { page, close } = await openPage(ctx.browser);
    try {
      const others = ['/versions', '/versions/velocity/all', '/versions/bungeecord/all', '/versions/all/8'];
      for (const v of ctx.versions.filter((v) => !isWaterfall(v))) others.push(`/version/${v.id}`);
      assert.ok(others.length > 10);
      for (const path of others) assert.equal(await notesOf(page, path), [], path);
    } finally {
      await close();
    }
  });

  site("the note's facts are the API's: resolve's endOfLife for Waterfall", async () => {
    const answer = (await (await fetch(url('/api/plugin-versions/resolve/waterfall'))).json()) as {
      endOfLife: { since: string; successor: string; url: string };
    };
    assert.equal(answer.endOfLife, { since: '2024-03', successor: 'Velocity', url: VELOCITY_SITE });
  });

  site.run();
}
