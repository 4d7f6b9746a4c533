import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { DEFAULT_DEPLOY } from '../server/config.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { currentTreeDir, openTree, type Tree } from '../server/tree/open.ts';
import { createCatalog } from '../server/versions/catalog.ts';
import { FEED_ENTRIES, releaseFeed } from '../server/versions/feed.ts';
import { FEED_PAGES } from '../server/page-paths.ts';
import { htmlText, parseXmlStrictly } from './strict-xml.ts';
import { SHARED_BUILD_CACHE, makeWorkspace, startTestOrigin, until, type Workspace, allRoutes } from './helpers.ts';

const ATOM = 'http://www.w3.org/2005/Atom';
const PUBLIC_URL = 'https://plugins.example.org';
// The demo's oldest version gets a changelog that tries to break out of HTML and of the feed's CDATA
// (twice: the feed library escapes only the first `]]>`).
const HOSTILE_ID = 'plugin-1768035600000-f8d161e085';
const HOSTILE =
  '## 1.0.0\n\nFirst release ]]> done ]]> twice.\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n`]]>` in code\n';
// Issue 27: about 5 KB of nested `>` overflowed the renderer's stack, and every feed answered 500.
const NESTED_ID = 'plugin-1768035900000-7e709249d7';
const NESTED = `${'>'.repeat(5000)} deep\n`;

const ctx = {} as { workspace: Workspace; origin: RunningOrigin; tree: Tree };
const feeds = suite('Atom feeds of releases');
feeds.before(async () => {
  ctx.workspace = await makeWorkspace({ build: false });
  await writeFile(join(ctx.workspace.dataDir, 'versions', `${HOSTILE_ID}.md`), HOSTILE);
  await writeFile(join(ctx.workspace.dataDir, 'versions', `${NESTED_ID}.md`), NESTED);
  const deploy = { ...DEFAULT_DEPLOY, publicUrl: PUBLIC_URL };
  await runBuild({
    dataDir: ctx.workspace.dataDir,
    distDir: ctx.workspace.distDir,
    cacheDir: SHARED_BUILD_CACHE,
    deploy,
  });
  ctx.origin = await startTestOrigin(ctx.workspace, { publicUrl: PUBLIC_URL });
  ctx.tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
});
feeds.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});

/** The feed at `path`, parsed strictly: any XML warning or error fails the test. */
async function readFeed(path: string) {
  const response = await fetch(ctx.origin.url + path);
  assert.is(response.status, 200, path);
  assert.is(response.headers.get('content-type'), 'application/atom+xml; charset=utf-8');
  return parseFeed(await response.text(), path);
}

/** An Atom document parsed strictly: any XML warning or error fails the test. */
function parseFeed(xml: string, what: string) {
  const document = parseXmlStrictly(xml, what);
  const root = document.documentElement!;
  assert.is(root.namespaceURI, ATOM);
  assert.is(root.localName, 'feed');
  type Node = ReturnType<typeof document.createElement>;
  const child = (element: Node, name: string) => [...element.childNodes].find((n) => n.nodeName === name) as Node;
  const text = (element: Node, name: string) => child(element, name)?.textContent ?? undefined;
  const entries = [...root.getElementsByTagNameNS(ATOM, 'entry')].map((entry) => ({
    id: text(entry, 'id'),
    title: text(entry, 'title')!,
    updated: text(entry, 'updated'),
    author: child(entry, 'author') && text(child(entry, 'author'), 'name'),
    link: child(entry, 'link')?.getAttribute('href'),
    content: text(entry, 'content') ?? '',
    summary: text(entry, 'summary') ?? '',
    categories: [...entry.getElementsByTagNameNS(ATOM, 'category')].map((c) => c.getAttribute('term')),
  }));
  return { id: text(root, 'id'), title: text(root, 'title'), updated: text(root, 'updated'), entries };
}

feeds('the feed of every release is valid Atom, newest first, each entry with what RFC 4287 requires', async () => {
  const feed = await readFeed('/api/plugin-versions/feed.atom');
  const versions = ctx.tree.catalog.versions;
  assert.is(feed.id, `${PUBLIC_URL}/api/plugin-versions/feed.atom`);
  assert.ok(feed.title && feed.updated);
  assert.is(feed.entries.length, Math.min(versions.length, FEED_ENTRIES));
  assert.equal(
    feed.entries.map((entry) => entry.id),
    versions.slice(0, FEED_ENTRIES).map((v) => `${PUBLIC_URL}/version/${v.id}`),
    'one entry per version, newest first, identified by its permanent page',
  );
  for (const entry of feed.entries) {
    assert.ok(entry.title && entry.updated && entry.author && entry.link, JSON.stringify(entry));
    assert.match(entry.content, new RegExp(`href="${PUBLIC_URL}/api/plugin-versions/download/plugin-`));
  }
  const beta = versions.find((v) => v.channel === 'beta')!;
  const betaEntry = feed.entries.find((entry) => entry.id?.endsWith(beta.id))!;
  assert.match(betaEntry.title, `${beta.pluginVersion} (beta) for ${beta.serverSoftware.join(', ')} on Java 21`);
  assert.ok(betaEntry.categories.includes('beta') && betaEntry.categories.includes('java-21'));
  assert.match(betaEntry.content, /<h3>1\.5\.0-beta\.1<\/h3>/, 'the changelog, as sanitised HTML');
});

feeds('a hostile changelog reaches the feed as harmless HTML, and the feed still parses', async () => {
  const feed = await readFeed('/api/plugin-versions/feed.atom');
  const entry = feed.entries.find((e) => e.id?.endsWith(HOSTILE_ID))!;
  // The content is HTML: `]]&gt;` there is the text `]]>`, written so that it cannot end the CDATA section.
  assert.match(
    htmlText(entry.content),
    /First release \]\]> done \]\]> twice\./,
    'the text survives the CDATA section',
  );
  assert.match(htmlText(entry.content), /<code>\]\]><\/code> in code/);
  assert.not.match(entry.content, /<script|onerror|<img/i, entry.content);
});

feeds('a changelog nested too deep to render shows as its escaped text, and the feeds answer', async () => {
  const feed = await readFeed('/api/plugin-versions/feed.atom');
  const entry = feed.entries.find((e) => e.id?.endsWith(NESTED_ID))!;
  assert.ok(entry.content.startsWith('<pre>&#62;&#62;&#62;'), entry.content.slice(0, 80));
  assert.is(htmlText(entry.content.slice(0, entry.content.indexOf('</pre>'))), `<pre>${NESTED}`);
});

feeds('every feed the tree holds parses as strict XML', async () => {
  const paths = [...allRoutes(ctx.tree.routes)].filter(([, route]) => route.headers['content-type']?.includes('atom'));
  assert.ok(paths.length >= 12, `${paths.length} feeds`);
  for (const [path] of paths) parseFeed(await (await fetch(ctx.origin.url + path)).text(), path);
});

feeds('names, versions and file names that try to leave the CDATA section or add markup stay text', () => {
  // Records as an older tree may hold them, from before the character rule: the feed escapes them anyway.
  const [first, ...rest] = ctx.tree.catalog.versions;
  const hostile = {
    ...first!,
    fileName: 'a]]>b]]><script>x</script>&amp;.jar',
    minecraftVersion: '1]]>2]]><b>',
    minecraftVersions: undefined,
    createdBy: 'nobody',
    changelog: '## x ]]> y ]]>\n\n[l](https://e.org/]]>) `]]>` \u0001',
  };
  const catalog = createCatalog([hostile, ...rest], [{ id: 'u', username: 'nobody', nickname: 'N ]]> <i>]]>\u0002' }]);
  const feed = parseFeed(releaseFeed(catalog, PUBLIC_URL, FEED_PAGES), 'hostile records');
  const entry = feed.entries.find((e) => e.id?.endsWith(first!.id))!;
  assert.match(htmlText(entry.summary), /Minecraft 1\]\]>2\]\]><b>: a\]\]>b\]\]><script>x<\/script>&amp;\.jar$/);
  assert.not.match(entry.summary, /<script|<b>/);
  assert.match(htmlText(entry.content), /Download a\]\]>b\]\]><script>x<\/script>&amp;\.jar/);
  assert.is(entry.author, 'N ]]> <i>]]>');
});

feeds("each software's feed lists only its releases; any letter case is answered live, the same bytes", async () => {
  for (const software of ['Velocity', 'LeafMC'] as const) {
    const path = `/api/plugin-versions/feed/${software.toLowerCase()}.atom`;
    const feed = await readFeed(path);
    const expected = ctx.tree.catalog.versions.filter((v) => v.serverSoftware.includes(software));
    assert.is(feed.entries.length, expected.length, software);
    for (const entry of feed.entries) assert.ok(entry.categories.includes(software), entry.title);
    assert.ok(ctx.tree.routes.has(path), `${path} is precomputed`);
    const [precomputed, live] = await Promise.all(
      [path, path.replace(software.toLowerCase(), software)].map(async (p) => (await fetch(ctx.origin.url + p)).text()),
    );
    assert.is(live, precomputed);
  }
  const unknown = await fetch(`${ctx.origin.url}/api/plugin-versions/feed/minestom.atom`);
  assert.is(unknown.status, 404);
  assert.match(
    ((await unknown.json()) as { error: string }).error,
    /Unknown server software "minestom"; expected one of/,
  );
});
feeds(
  'a build with another PUBLIC_URL and the same data writes the new links (no feed reused from the tree before)',
  async () => {
    const deploy = { ...DEFAULT_DEPLOY, publicUrl: 'https://other.example.org' };
    await runBuild({
      dataDir: ctx.workspace.dataDir,
      distDir: ctx.workspace.distDir,
      cacheDir: SHARED_BUILD_CACHE,
      deploy,
    });
    await until(
      async () =>
        (await readFeed('/api/plugin-versions/feed.atom')).id ===
        'https://other.example.org/api/plugin-versions/feed.atom',
      'the origin serves the new tree',
    );
    const feed = await readFeed('/api/plugin-versions/feed/velocity.atom');
    for (const entry of feed.entries) assert.match(entry.link!, /^https:\/\/other\.example\.org\/version\//);
  },
);
feeds.run();
