import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DOMParser, type Document } from '@xmldom/xmldom';
import fc from 'fast-check';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { DEFAULT_DEPLOY } from '../server/config.ts';
import { DataError } from '../server/data-files.ts';
import { forbiddenCharacter } from '../server/free-text.ts';
import { ProjectFile, type ProjectRecord } from '../server/project/schema.ts';
import { releaseFeed } from '../server/versions/feed.ts';
import { FEED_PAGES } from '../server/page-paths.ts';
import { createCatalog } from '../server/versions/catalog.ts';
import { createFileStorage } from '../server/storage.ts';
import { attemptDelivery } from '../server/webhooks/deliver.ts';
import { outboxKey, webhookStore } from '../server/webhooks/store.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { SHARED_BUILD_CACHE, makeWorkspace, snapshotFiles, startTestOrigin, type Workspace } from './helpers.ts';
import { parseXmlStrictly } from './strict-xml.ts';
import { startReceiver } from './webhook-receiver.ts';
import type { PluginVersion } from '../server/versions/schema.ts';

const PUBLIC_URL = 'https://depot.example.org';
const DEMO = JSON.parse(await readFile(new URL('../data/project.json', import.meta.url), 'utf8')) as Record<
  string,
  unknown
>;

const html = (text: string) => new DOMParser({ onError: () => {} }).parseFromString(text, 'text/html');
const metaOf = (doc: Document, key: string) =>
  [...doc.getElementsByTagName('meta')]
    .find((m) => m.getAttribute('property') === key || m.getAttribute('name') === key)
    ?.getAttribute('content');
const linkOf = (doc: Document, rel: string) =>
  [...doc.getElementsByTagName('link')].find((l) => l.getAttribute('rel') === rel)?.getAttribute('href');

// ---------------------------------------------------------------------------------------------------
const refusals = suite('a bad data/project.json: the build refuses naming the field, dist/ unchanged');
let workspace: Workspace;
refusals.before(async () => {
  workspace = await makeWorkspace();
});
refusals.after(() => workspace.remove());

const BAD: [what: string, change: (p: Record<string, unknown>) => Record<string, unknown>, message: RegExp][] = [
  ['no name', ({ name: _, ...p }) => p, /project\.json: name: /],
  [
    'a bidi override in the name',
    (p) => ({ ...p, name: 'Demo\u202Egnp' }),
    /project\.json: name: contains a format character \(U\+202E\)/,
  ],
  ['`]]>` in the name', (p) => ({ ...p, name: 'a]]>b' }), /project\.json: name: contains "\]\]>"/],
  [
    'a line break in the summary',
    (p) => ({ ...p, summary: 'one\ntwo' }),
    /project\.json: summary: contains a control character/,
  ],
  ['a summary of 161 characters', (p) => ({ ...p, summary: 'x'.repeat(161) }), /project\.json: summary: /],
  [
    '`</script>` and a bidi override in the description',
    (p) => ({ ...p, description: '</script>\u202E' }),
    /project\.json: description: contains/,
  ],
  [
    'a javascript: link',
    (p) => ({ ...p, links: { source: 'javascript:alert(1)' } }),
    /project\.json: links\.source: must be an https:\/\/ URL/,
  ],
  [
    'an http link',
    (p) => ({ ...p, links: { wiki: 'http://example.org' } }),
    /project\.json: links\.wiki: must be an https:\/\/ URL/,
  ],
  [
    'an unknown link',
    (p) => ({ ...p, links: { twitter: 'https://x.com/a' } }),
    /project\.json: links: Unrecognized key/,
  ],
  ['a licence expression', (p) => ({ ...p, license: 'MIT OR Apache-2.0' }), /project\.json: license: must be an SPDX/],
  ['a licence SPDX does not list', (p) => ({ ...p, license: 'MTI' }), /project\.json: license: must be an SPDX/],
  ['a deprecated SPDX id', (p) => ({ ...p, license: 'GPL-3.0' }), /project\.json: license: must be an SPDX/],
  [
    'an icon outside data/',
    (p) => ({ ...p, icon: '../users.json' }),
    /project\.json: icon: must be the name of a \.png or \.svg file/,
  ],
  ['a missing icon', (p) => ({ ...p, icon: 'missing.png' }), /project\.json: icon: .*missing\.png does not exist/],
  ['an unknown field', (p) => ({ ...p, homepage: 'https://a.org' }), /project\.json: \(root\): Unrecognized key/],
];

refusals('each refusal is one line naming the field; dist/ is byte-identical', async () => {
  const before = await snapshotFiles(workspace.distDir);
  for (const [what, change, message] of BAD) {
    await writeFile(join(workspace.dataDir, 'project.json'), JSON.stringify(change({ ...DEMO })));
    const error = await runBuild({
      dataDir: workspace.dataDir,
      distDir: workspace.distDir,
      cacheDir: SHARED_BUILD_CACHE,
      site: false,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.instance(error, DataError, what);
    assert.match((error as Error).message, message, what);
    assert.not.match((error as Error).message, /\n/, `${what}: one line`);
  }
  // An icon that is not an image, and one that is not square.
  await writeFile(join(workspace.dataDir, 'bad.png'), 'not a png');
  await sharp({ create: { width: 600, height: 512, channels: 4, background: '#000' } })
    .png()
    .toFile(join(workspace.dataDir, 'wide.png'));
  for (const [icon, message] of [
    ['bad.png', /icon: .*bad\.png is not a readable PNG image/],
    ['wide.png', /icon: .*wide\.png is 600x512; an icon is square/],
  ] as const) {
    await writeFile(join(workspace.dataDir, 'project.json'), JSON.stringify({ ...DEMO, icon }));
    const error = await runBuild({
      dataDir: workspace.dataDir,
      distDir: workspace.distDir,
      cacheDir: SHARED_BUILD_CACHE,
      site: false,
    }).catch((e: Error) => e);
    assert.match(String((error as Error).message), message, icon);
  }
  assert.equal(await snapshotFiles(workspace.distDir), before);
});
refusals.run();

// ---------------------------------------------------------------------------------------------------
const hostile = suite('hostile text in the free-text fields');

const HOSTILE = [
  '',
  ']]>',
  '</script>',
  '<img src=x onerror=alert(1)>',
  '\u202E',
  '\u2066',
  '\u0000',
  '\n',
  '&amp;',
  '"',
  'é',
  '👩\u200D💻',
];
const text = fc
  .array(fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ maxLength: 6 })), { maxLength: 6 })
  .map((parts) => parts.join(''));

hostile(
  'a name or summary is refused when it breaks the character rule or holds `]]>`; else the feed is well-formed and says it',
  () => {
    const catalog = createCatalog([], []);
    fc.assert(
      fc.property(text, text, (name, summary) => {
        const parsed = ProjectFile.safeParse({ name, summary });
        const bad = (value: string) =>
          forbiddenCharacter(value) !== undefined || value.includes(']]>') || value.trim() !== value;
        if (bad(name) || bad(summary) || name === '' || summary === '' || summary.length > 160 || name.length > 80) {
          assert.not.ok(parsed.success, JSON.stringify({ name, summary }));
          return;
        }
        assert.ok(parsed.success, JSON.stringify({ name, summary }));
        const feed = parseXmlStrictly(
          releaseFeed(catalog, PUBLIC_URL, FEED_PAGES, undefined, parsed.data as ProjectRecord),
          name,
        );
        assert.is(feed.getElementsByTagName('title')[0]!.textContent, `${name} releases`);
      }),
      { numRuns: 300 },
    );
  },
);
hostile.run();

// ---------------------------------------------------------------------------------------------------
const built = suite('the demo project on the built site, the feeds, the API and Discord');
let site: Workspace;
let origin: Awaited<ReturnType<typeof startTestOrigin>>;
built.before(async () => {
  site = await makeWorkspace({ build: false });
  await runBuild({
    dataDir: site.dataDir,
    distDir: site.distDir,
    cacheDir: SHARED_BUILD_CACHE,
    site: true,
    deploy: { ...DEFAULT_DEPLOY, publicUrl: PUBLIC_URL },
  });
  origin = await startTestOrigin(site, { publicUrl: PUBLIC_URL });
});
built.after(async () => {
  await origin?.close();
  await site.remove();
});

built(
  'every page: title, meta description, favicon, header, Open Graph and Twitter tags with an icon in the tree',
  async () => {
    for (const path of ['/', '/versions', '/brands']) {
      const doc = html(await (await fetch(origin.url + path)).text());
      const title = doc.getElementsByTagName('title')[0]!.textContent!;
      assert.match(title, / · DepotDemo downloads$/, path);
      assert.ok(metaOf(doc, 'description'), path);
      assert.is(linkOf(doc, 'icon'), '/api/project/icon/32.png', path);
      assert.is(linkOf(doc, 'apple-touch-icon'), '/api/project/icon/180.png', path);
      assert.is(metaOf(doc, 'og:title'), title, path);
      assert.is(metaOf(doc, 'twitter:card'), 'summary', path);
      const image = metaOf(doc, 'og:image')!;
      assert.is(image, `${PUBLIC_URL}/api/project/icon/512.png`, path);
      assert.is(metaOf(doc, 'twitter:image'), image, path);
      const logo = [...doc.getElementsByTagName('a')].find((a) => a.getAttribute('class') === 'logo')!;
      assert.match(logo.textContent!, /DepotDemo/, path);
      assert.is(logo.getElementsByTagName('img')[0]!.getAttribute('src'), '/api/project/icon/32.png', path);
    }
    const home = html(await (await fetch(`${origin.url}/`)).text());
    assert.is(metaOf(home, 'description'), DEMO.summary);
    assert.match(await (await fetch(`${origin.url}/`)).text(), /<strong>plugin depot<\/strong>/);
    const links = [...home.getElementsByTagName('ul')].find((u) => u.getAttribute('class') === 'project-links')!;
    assert.equal(
      [...links.getElementsByTagName('a')].map((a) => a.getAttribute('href')),
      [
        'https://github.com/example/depot-demo',
        'https://github.com/example/depot-demo/issues',
        'https://discord.gg/example',
      ],
    );
    assert.match(home.toString(), /Licence: <a href="https:\/\/spdx\.org\/licenses\/MIT\.html">MIT<\/a>/);
  },
);

built('the icon renditions are precomputed tree files that decode at their size', async () => {
  const tree = await openTree((await currentTreeDir(site.distDir))!);
  for (const size of [32, 180, 512]) {
    const entry = tree.routes.get(`/api/project/icon/${size}.png`);
    assert.ok(entry, `${size} precomputed`);
    const meta = await sharp(await readFile(join(tree.dir, entry.file))).metadata();
    assert.equal([meta.format, meta.width, meta.height], ['png', size, size]);
    const answer = await fetch(`${origin.url}/api/project/icon/${size}.png`);
    assert.is(answer.headers.get('content-type'), 'image/png');
  }
});

built('GET /api/project over HTTP; the feeds carry the name and icon', async () => {
  const answer = await fetch(`${origin.url}/api/project`);
  assert.is(answer.status, 200);
  const body = (await answer.json()) as Record<string, unknown>;
  assert.is(body.name, 'DepotDemo');
  assert.is(body.license, 'MIT');
  assert.equal(
    body.icons,
    [32, 180, 512].map((size) => ({ size, url: `/api/project/icon/${size}.png` })),
  );
  const feeds: [string, string][] = [
    ['/api/plugin-versions/feed.atom', 'DepotDemo releases'],
    ['/api/plugin-versions/feed/PaperMC.atom', 'DepotDemo releases for PaperMC'],
  ];
  for (const [path, title] of feeds) {
    const feed = parseXmlStrictly(await (await fetch(origin.url + path)).text(), path).documentElement!;
    const child = (name: string) => [...feed.childNodes].find((n) => n.nodeName === name)?.textContent;
    assert.is(child('title'), title);
    assert.is(child('icon'), `${PUBLIC_URL}/api/project/icon/180.png`);
    assert.is(child('logo'), `${PUBLIC_URL}/api/project/icon/512.png`);
  }
});

built('a Discord webhook message carries the project as its embed author', async () => {
  const receiver = await startReceiver(() => 204);
  const storage = createFileStorage(join(site.dir, 'webhooks'));
  try {
    const store = webhookStore(storage);
    const webhook = {
      id: 'wh-0123456789ab',
      url: `${receiver.url}/discord`,
      format: 'discord' as const,
      events: ['release' as const],
      secret: `dpw_${'s'.repeat(43)}`,
      createdAt: new Date().toISOString(),
    };
    await store.add(webhook);
    const latest = await fetch(`${origin.url}/api/plugin-versions/latest/papermc`);
    const { version } = (await latest.json()) as { version: PluginVersion };
    const delivery = await store.enqueue(webhook.id, { event: 'release', version }, Date.now());
    const tree = await openTree((await currentTreeDir(site.distDir))!);
    const result = await attemptDelivery(store, outboxKey(delivery), {
      publicUrl: PUBLIC_URL,
      now: Date.now,
      servedProject: () => tree.project,
    });
    assert.is(result, 'delivered');
    const message = JSON.parse(receiver.received[0]!.body) as { embeds: { author: unknown }[] };
    assert.equal(message.embeds[0]!.author, {
      name: 'DepotDemo',
      url: `${PUBLIC_URL}/`,
      icon_url: `${PUBLIC_URL}/api/project/icon/180.png`,
    });
  } finally {
    await storage.dispose();
    await receiver.stop();
  }
});
built.run();

// ---------------------------------------------------------------------------------------------------
const none = suite('a depot without data/project.json keeps the neutral wording');
let bare: Workspace;
let bareOrigin: Awaited<ReturnType<typeof startTestOrigin>>;
none.before(async () => {
  bare = await makeWorkspace({ build: false });
  await rm(join(bare.dataDir, 'project.json'));
  await runBuild({ dataDir: bare.dataDir, distDir: bare.distDir, cacheDir: SHARED_BUILD_CACHE, site: true });
  bareOrigin = await startTestOrigin(bare);
});
none.after(async () => {
  await bareOrigin?.close();
  await bare?.remove();
});

/** Every kind of page the site builds, with its title as it was before data/project.json existed. */
const NEUTRAL_TITLES: [path: string, title: RegExp][] = [
  ['/', /^Downloads · plugin depot$/],
  ['/versions', /^Version history: .+ · plugin depot$/],
  ['/versions/papermc/21', /^.+ · plugin depot$/],
  ['/versions/all/21', /^.+ · plugin depot$/],
  ['/versions/papermc/all', /^.+ · plugin depot$/],
  ['/brands', /^Brand kit · plugin depot$/],
  ['/badges', /^Badges · plugin depot$/],
  ['/charts', /^Chart playground · plugin depot$/],
  ['/reference', /^API reference · plugin depot$/],
];

none(
  "every page: the neutral title and header, the depot's own mark as favicon, no Open Graph or Twitter tags",
  async () => {
    const mark = (await readFile(new URL('../site/src/components/depot-mark.svg', import.meta.url), 'utf8')).trim();
    for (const [path, title] of NEUTRAL_TITLES) {
      const answer = await fetch(bareOrigin.url + path);
      assert.is(answer.status, 200, path);
      const doc = html(await answer.text());
      assert.match(doc.getElementsByTagName('title')[0]!.textContent!, title, path);
      const icon = linkOf(doc, 'icon')!;
      assert.match(icon, /^data:image\/svg\+xml,/, path);
      assert.is(decodeURIComponent(icon.slice(icon.indexOf(',') + 1)), mark, `${path}: the depot's own mark`);
      assert.is(linkOf(doc, 'apple-touch-icon'), undefined, path);
      const social = [...doc.getElementsByTagName('meta')]
        .map((m) => m.getAttribute('property') || m.getAttribute('name') || '')
        .filter((key) => /^(og|twitter):/.test(key));
      assert.equal(social, [], `${path}: no link preview tags`);
      const logo = [...doc.getElementsByTagName('a')].find((a) => a.getAttribute('class') === 'logo')!;
      assert.is(logo.textContent!.trim(), 'plugin depot', path);
      assert.is(logo.getElementsByTagName('img').length, 0, path);
    }
    const home = html(await (await fetch(`${bareOrigin.url}/`)).text());
    assert.is(metaOf(home, 'description'), 'Download the latest plugin JAR for your server software and Java version.');
    assert.not.ok(
      [...home.getElementsByTagName('ul')].some((u) => u.getAttribute('class') === 'project-links'),
      'no project links',
    );
  },
);

none('GET /api/project is a 404 with a JSON error; the feeds keep their titles and have no icon', async () => {
  const tree = await openTree((await currentTreeDir(bare.distDir))!);
  assert.is(tree.project, undefined);
  assert.not.match(await readFile(join(tree.dir, 'catalog.json'), 'utf8'), /"project"/);
  const answer = await fetch(`${bareOrigin.url}/api/project`);
  assert.is(answer.status, 404);
  assert.match(answer.headers.get('content-type')!, /application\/json/);
  assert.equal(await answer.json(), { error: 'This depot has no data/project.json' });
  assert.is((await fetch(`${bareOrigin.url}/api/project/icon/32.png`)).status, 404);
  const feeds: [string, string][] = [
    ['/api/plugin-versions/feed.atom', 'Plugin releases'],
    ['/api/plugin-versions/feed/PaperMC.atom', 'Plugin releases for PaperMC'],
  ];
  for (const [path, title] of feeds) {
    const feed = parseXmlStrictly(await (await fetch(bareOrigin.url + path)).text(), path).documentElement!;
    const child = (name: string) => [...feed.childNodes].find((n) => n.nodeName === name)?.textContent;
    assert.is(child('title'), title, path);
    assert.is(child('icon'), undefined, path);
    assert.is(child('logo'), undefined, path);
  }
});
none.run();
