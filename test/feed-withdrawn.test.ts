import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { createCatalog, loadCatalog, versionsDir, type Catalog } from '../server/versions/catalog.ts';
import { FEED_ENTRIES, releaseFeed } from '../server/versions/feed.ts';
import { FEED_PAGES } from '../server/page-paths.ts';
import type { CatalogVersion, Withdrawal } from '../server/versions/schema.ts';
import { htmlText, parseXmlStrictly } from './strict-xml.ts';
import { SHARED_BUILD_CACHE, makeWorkspace, startTestOrigin, until, type Workspace } from './helpers.ts';

// Issue 29: a withdrawn version's entry in the Atom feeds says so, says why, and is updated at its withdrawal.

const ATOM = 'http://www.w3.org/2005/Atom';
const PUBLIC_URL = 'https://plugins.example.org';
// Free text that tries to leave the CDATA section (twice: the feed library escapes only the first) and add markup.
const REASON = 'Corrupts worlds ]]> twice ]]> <script>alert(1)</script> & "$HOME" <b>now</b>';
const WITHDRAWAL: Withdrawal = { reason: REASON, at: '2027-01-05T12:00:00.000Z', by: 'tester' };

type Entry = { id: string; title: string; updated: string; summary: string; content: string; categories: string[] };

/** An Atom document parsed strictly (any XML warning fails), with its entries' texts. */
function parseFeed(xml: string, what: string) {
  const document = parseXmlStrictly(xml, what);
  const root = document.documentElement!;
  type Node = ReturnType<typeof document.createElement>;
  const text = (element: Node, name: string) =>
    ([...element.childNodes].find((n) => n.nodeName === name) as Node | undefined)?.textContent ?? '';
  const entries: Entry[] = [...root.getElementsByTagNameNS(ATOM, 'entry')].map((entry) => ({
    id: text(entry, 'id'),
    title: text(entry, 'title'),
    updated: text(entry, 'updated'),
    summary: text(entry, 'summary'),
    content: text(entry, 'content'),
    categories: [...entry.getElementsByTagNameNS(ATOM, 'category')].map((c) => c.getAttribute('term')!),
  }));
  return { updated: text(root, 'updated'), entries };
}

/** The catalog with one version withdrawn. */
function withdrawIn(catalog: Catalog, id: string, withdrawal: Withdrawal = WITHDRAWAL): Catalog {
  const versions = catalog.versions.map((v) => (v.id === id ? { ...v, withdrawn: withdrawal } : v));
  return createCatalog(versions, [...catalog.users.values()]);
}

const entryOf = (feed: { entries: Entry[] }, id: string) => feed.entries.find((e) => e.id.endsWith(`/version/${id}`));

const pure = suite('releaseFeed with a withdrawn version');
const pureCtx = {} as { catalog: Catalog };
pure.before(async () => {
  const workspace = await makeWorkspace({ build: false });
  pureCtx.catalog = await loadCatalog(workspace.dataDir);
  await workspace.remove();
});

pure('its entry says withdrawn and why, is updated at the withdrawal; every other entry is unchanged', () => {
  const { catalog } = pureCtx;
  const target = catalog.versions.at(-1)!;
  const before = parseFeed(releaseFeed(catalog, PUBLIC_URL, FEED_PAGES), 'before');
  const after = parseFeed(releaseFeed(withdrawIn(catalog, target.id), PUBLIC_URL, FEED_PAGES), 'after');
  const entry = entryOf(after, target.id)!;
  assert.ok(entry.title.startsWith('Withdrawn: '), entry.title);
  assert.is(htmlText(entry.title), `Withdrawn: ${htmlText(entryOf(before, target.id)!.title)}`);
  assert.ok(htmlText(entry.summary).startsWith(`Withdrawn: ${REASON} (`), entry.summary);
  assert.match(htmlText(entry.content), `<strong>Withdrawn</strong>: ${REASON}`);
  assert.not.match(entry.content, /<script|<b>/, 'the reason is text, not markup');
  assert.is(entry.updated, WITHDRAWAL.at);
  assert.is(after.updated, WITHDRAWAL.at, "the feed's updated follows its newest change");
  assert.ok(entry.categories.includes('withdrawn'));
  // The oldest version, withdrawn after every release: listed first, by its withdrawal.
  assert.is(after.entries[0]!.id, entry.id);
  const others = (feed: { entries: Entry[] }) => feed.entries.filter((e) => e.id !== entry.id);
  assert.equal(others(after), others(before), 'the other entries, as they were');
});

pure('an edit after the withdrawal dates the entry; without a withdrawn version, the bytes are the same', () => {
  const { catalog } = pureCtx;
  const target = catalog.versions[2]!;
  const edited = createCatalog(
    catalog.versions.map((v) =>
      v.id === target.id ? { ...v, withdrawn: WITHDRAWAL, updatedAt: '2027-02-01T00:00:00.000Z' } : v,
    ),
    [...catalog.users.values()],
  );
  assert.is(
    entryOf(parseFeed(releaseFeed(edited, PUBLIC_URL, FEED_PAGES), 'edited'), target.id)!.updated,
    '2027-02-01T00:00:00.000Z',
  );
  // A withdrawal undone (restore) gives back the feed of before, byte for byte.
  const restored = createCatalog(
    withdrawIn(catalog, target.id).versions.map(({ withdrawn: _withdrawn, ...v }) => v),
    [...catalog.users.values()],
  );
  assert.is(releaseFeed(restored, PUBLIC_URL, FEED_PAGES), releaseFeed(catalog, PUBLIC_URL, FEED_PAGES));
});

pure('a version older than the newest FEED_ENTRIES releases gets an entry once withdrawn', () => {
  const [first] = pureCtx.catalog.versions;
  const many: CatalogVersion[] = Array.from({ length: FEED_ENTRIES + 10 }, (_, i) => {
    const at = new Date(Date.UTC(2026, 0, 1 + i)).toISOString();
    return {
      ...first!,
      id: `plugin-${Date.UTC(2026, 0, 1 + i)}-${String(i).padStart(10, '0')}`,
      createdAt: at,
      updatedAt: at,
    };
  });
  const catalog = createCatalog(many, [...pureCtx.catalog.users.values()]);
  const oldest = catalog.versions.at(-1)!;
  assert.not.ok(
    entryOf(parseFeed(releaseFeed(catalog, PUBLIC_URL, FEED_PAGES), 'many'), oldest.id),
    'not listed before',
  );
  const feed = parseFeed(releaseFeed(withdrawIn(catalog, oldest.id), PUBLIC_URL, FEED_PAGES), 'many, one withdrawn');
  assert.is(feed.entries.length, FEED_ENTRIES);
  assert.is(feed.entries[0]!.id, `${PUBLIC_URL}/version/${oldest.id}`);
  assert.equal(
    feed.entries.slice(1).map((e) => e.id),
    catalog.versions.slice(0, FEED_ENTRIES - 1).map((v) => `${PUBLIC_URL}/version/${v.id}`),
  );
});
pure.run();

const served = suite('an origin serves the withdrawn entry once a build changes the record');
const ctx = {} as { workspace: Workspace; origin: RunningOrigin };
served.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await startTestOrigin(ctx.workspace);
});
served.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});

served('the change-first build re-renders the feed of all and the feeds of its softwares, and no other', async () => {
  const { workspace, origin } = ctx;
  const feedText = async (path: string) => {
    const response = await fetch(origin.url + path);
    assert.is(response.status, 200, path);
    return response.text();
  };
  const catalog = await loadCatalog(workspace.dataDir);
  const target = catalog.versions.find(
    (v) => v.serverSoftware.includes('PaperMC') && !v.serverSoftware.includes('Velocity'),
  )!;
  const paths = [
    '/api/plugin-versions/feed.atom',
    ...['papermc', 'velocity'].map((s) => `/api/plugin-versions/feed/${s}.atom`),
  ];
  const before = await Promise.all(paths.map(feedText));
  // As the withdraw command changes data/: its record rewritten under the build lock, served first.
  const { sha512: _sha512, changelog: _changelog, ...record } = catalog.byId.get(target.id)!;
  await runBuild({
    dataDir: workspace.dataDir,
    distDir: workspace.distDir,
    cacheDir: SHARED_BUILD_CACHE,
    site: false,
    change: async (current) => {
      await writeFile(
        join(versionsDir(workspace.dataDir), `${target.id}.json`),
        `${JSON.stringify({ ...record, withdrawn: WITHDRAWAL }, null, 2)}\n`,
      );
      return withdrawIn(current, target.id);
    },
  });
  await until(async () => (await feedText(paths[0]!)) !== before[0], 'the origin serves the new tree');
  const after = await Promise.all(paths.map(feedText));
  for (const [i, path] of paths.slice(0, 2).entries()) {
    const feed = parseFeed(after[i]!, path);
    const entry = entryOf(feed, target.id)!;
    assert.ok(entry.title.startsWith('Withdrawn: '), `${path}: ${entry.title}`);
    assert.ok(htmlText(entry.summary).startsWith(`Withdrawn: ${REASON}`), path);
    assert.is(entry.updated, WITHDRAWAL.at, path);
    assert.is(feed.updated, WITHDRAWAL.at, path);
  }
  assert.is(after[2], before[2], "a software the version is not for keeps its feed's bytes");
});
served.run();
