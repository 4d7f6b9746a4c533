import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { loadCatalog } from '../server/versions/catalog.ts';
import {
  CHANGELOG_LIMITS,
  acceptChangelog,
  changelogHtml,
  changelogLimitProblem,
} from '../server/changelog-markdown.ts';
import { SHARED_BUILD_CACHE, assertRefusesData, makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

const html = suite('changelogHtml');

const renderCases: [string, string, RegExp][] = [
  [
    'headings, lists and emphasis',
    '## Fixed\n\n- a *crash* on `/depot reload`',
    /<h3>Fixed<\/h3>[\s\S]*<li>a <em>crash<\/em> on <code>\/depot reload<\/code><\/li>/,
  ],
  [
    'an https link',
    'See [the notes](https://example.org/notes).',
    /<a href="https:\/\/example\.org\/notes">the notes<\/a>/,
  ],
  [
    'code blocks as text',
    '```\n<script>alert(1)</script>\n```',
    /<pre><code>&#x3C;script>alert\(1\)&#x3C;\/script>\n<\/code><\/pre>/,
  ],
];
for (const [name, markdown, expected] of renderCases) {
  html(`renders ${name}`, () => {
    assert.match(changelogHtml(markdown), expected);
  });
}

// Markdown that tries to get script into the page: none of it reaches the HTML.
const hostile: [string, string][] = [
  ['a script element', 'Notes\n\n<script>alert(1)</script>\n\nmore'],
  ['an inline script element', 'a <script>alert(1)</script> b'],
  ['an img with onerror', 'text <img src=x onerror=alert(1)> more'],
  ['an HTML block with onerror', '<div onerror="alert(1)">\n\nhi\n\n</div>'],
  ['an svg with onload', '<svg onload=alert(1)></svg>'],
  ['a link with onclick', '<a href="https://example.org" onclick="alert(1)">x</a>'],
  ['an iframe', '<iframe src="https://example.org"></iframe>'],
  ['a style element', '<style>body { display: none }</style>'],
];
for (const [name, markdown] of hostile) {
  html(`drops ${name}`, () => {
    const output = changelogHtml(markdown);
    assert.not.match(output, /<script/i, output);
    assert.not.match(output, /onerror|onload|onclick/i, output);
    assert.not.match(output, /<(iframe|style|svg|img|div)/i, output);
  });
}
const dangerousUrls: [string, string][] = [
  ['a javascript: link', '[click](javascript:alert(1))'],
  ['a javascript: image', '![x](javascript:alert(1))'],
  ['a data: link', '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
  ['a javascript: autolink reference', '[x][a]\n\n[a]: javascript:alert(1)'],
];
for (const [name, markdown] of dangerousUrls) {
  html(`keeps the text of ${name} but not its URL`, () => {
    const output = changelogHtml(markdown);
    assert.not.match(output, /javascript:|data:/i, output);
  });
}
html('a quote in a link title stays inside the attribute', () => {
  const output = changelogHtml('[a](https://example.org "x\\" onerror=\\"alert(1)")');
  assert.is(output, '<p><a href="https://example.org" title="x&#x22; onerror=&#x22;alert(1)">a</a></p>');
});
html('the same Markdown always gives the same HTML', () => {
  const markdown = '## 1.0\n\n- one\n- two';
  assert.is(changelogHtml(markdown), changelogHtml(markdown));
});
// Issue 27: about 5 KB of nested `>` overflowed the stack (a failed build, feeds answering 500), and
// 64 KiB of `**_a` took 29 s to render. Beyond the limits a changelog shows as its escaped text, at once.
const DEEP_BY_TABS = Array.from({ length: 62 }, (_, k) => `${'\t'.repeat(16 * k)}${'- '.repeat(32)}deep <b>\n`).join(
  '',
);
const DEEP_BY_SPACES = Array.from({ length: 44 }, (_, k) => `${' '.repeat(64 * k)}${'- '.repeat(32)}deep <b>\n`).join(
  '',
);
const beyond: [string, string][] = [
  ['about 5 KB of nested block quotes', `${'>'.repeat(5000)} deep <b>`],
  ['nested list items', `${'- '.repeat(3000)}deep <b>`],
  ['64 KiB of **_a in one paragraph', '**_a'.repeat(16_384)],
  ['images nested 3000 deep', `${'!['.repeat(3000)}a${'](b)'.repeat(3000)}`],
  // Lists nested by indentation across lines, each line within 32 markers: 2,000 deep, no marker count sees it.
  ['lists nested 2,000 deep across tab-indented lines', DEEP_BY_TABS],
  ['lists nested deep across space-indented lines', DEEP_BY_SPACES],
  // 5,000 empty block quotes in 20 KB rendered in 5.5 s: each block costs more the more there are.
  ['5,000 empty block quotes', `${'\n\n\n>'.repeat(5000)} deep <b>`],
];
for (const [name, markdown] of beyond) {
  html(`shows ${name} as escaped text, in well under a second, without throwing`, () => {
    const started = performance.now();
    const output = changelogHtml(markdown);
    assert.ok(performance.now() - started < 1000, `${Math.round(performance.now() - started)} ms`);
    assert.ok(output.startsWith('<pre>') && output.endsWith('</pre>'), output.slice(0, 60));
    assert.not.match(output, /<b>|<blockquote|<em|<img/);
    assert.ok(output.includes('deep &#60;b&#62;') || !markdown.includes('deep'), 'the text, escaped');
  });
}
html.run();

const limits = suite('changelogLimitProblem and acceptChangelog');
const within: [string, string][] = [
  [
    'a long list with emphasis on every item',
    Array.from({ length: 600 }, (_, i) => `- **Fixed** _${i}_ [x](https://e.org/${i})`).join('\n'),
  ],
  ['a thematic break of 40 spaced dashes', `a\n\n${'- '.repeat(40)}\n\nb`],
  ['lists nested three deep and a quote', '- a\n  - b\n    - c\n\n> quoted\n> > twice'],
  ['a fenced code block with brackets and stars', '```\n[[[ *** ___ ]]]\n```'],
  ['a paragraph of 500 emphasis runs', '*a* '.repeat(250)],
];
for (const [name, markdown] of within) {
  limits(`accepts ${name}`, () => {
    assert.is(changelogLimitProblem(markdown), undefined);
    assert.is(
      acceptChangelog(markdown, () => 0),
      undefined,
    );
  });
}
const refusedLimits: [string, string, RegExp][] = [
  ['5 KB of nested >', `${'>'.repeat(5000)} x`, /^line 1 nests more than 32 block quotes and list items$/],
  ['33 nested list items on line 3', `a\n\n${'- '.repeat(33)}x`, /^line 3 nests more than 32/],
  ['quotes and lists mixed past 32', `${'> - '.repeat(17)}x`, /^line 1 nests more than 32/],
  [
    '2001 list items',
    Array.from({ length: 2001 }, () => '- a').join('\n'),
    /^line 2001 starts list item 2001; a changelog has at most 2000$/,
  ],
  ['33 [ open at once', `${'['.repeat(33)}a`, /^line 1 opens more than 32 \[ brackets inside each other$/],
  ['lists nested across tab-indented lines', DEEP_BY_TABS, /^line 2 nests more than 32 block quotes and list items$/],
  [
    'lists nested across space-indented lines',
    DEEP_BY_SPACES,
    /^line 2 nests more than 32 block quotes and list items$/,
  ],
  [
    '2,001 paragraphs',
    'a\n\n'.repeat(2001),
    /^line 4001 starts block 2001; a changelog has at most 2000 paragraphs, quotes and other blocks$/,
  ],
  ['2,001 quoted lines', '> a\n'.repeat(2001), /^line 2001 starts block 2001/],
  ['a list item indented 66 spaces', `- a\n\n${' '.repeat(66)}- b`, /^line 3 nests more than 32/],
  [
    '64 KiB of **_a',
    '**_a'.repeat(16_384),
    /^the paragraph from line 1 has more than 500 runs of \* or _; separate it/,
  ],
  [
    '501 emphasis runs over several lines of one paragraph',
    'x\n\n' + '*a*\n'.repeat(251),
    /^the paragraph from line 3 has more than 500 runs/,
  ],
];
for (const [name, markdown, message] of refusedLimits) {
  limits(`refuses ${name}, in well under a second`, () => {
    const started = performance.now();
    assert.match(changelogLimitProblem(markdown) ?? '', message);
    assert.match(acceptChangelog(markdown, () => 0) ?? '', message);
    assert.ok(performance.now() - started < 1000);
  });
}
limits('a render over the CPU budget is refused, naming the time and the limit', () => {
  let now = 0;
  const clock = () => (now += CHANGELOG_LIMITS.renderMs + 1);
  assert.is(
    acceptChangelog('## 1.0\n\nslow, says the clock', clock),
    `took ${CHANGELOG_LIMITS.renderMs + 1} ms to render; a changelog renders in at most ${CHANGELOG_LIMITS.renderMs} ms`,
  );
});
limits.run();

const served = suite('changelogs: data/versions/<id>.md, served as Markdown');
const ctx = {} as { workspace: Workspace; origin: RunningOrigin };
const HOSTILE_ID = 'plugin-1768035600000-f8d161e085';
const HOSTILE = '## 1.0.0\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)> First release.\n';
served.before(async () => {
  ctx.workspace = await makeWorkspace({ build: false });
  await writeFile(join(ctx.workspace.dataDir, 'versions', `${HOSTILE_ID}.md`), HOSTILE);
  await runBuild({ dataDir: ctx.workspace.dataDir, distDir: ctx.workspace.distDir, cacheDir: SHARED_BUILD_CACHE });
  ctx.origin = await startTestOrigin(ctx.workspace);
});
served.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});

type Version = { id: string; pluginVersion: string; changelog?: string };

served('the list carries each changelog exactly as written, and no field for versions without one', async () => {
  const { versions } = (await (await fetch(`${ctx.origin.url}/api/plugin-versions`)).json()) as {
    versions: Version[];
  };
  const dir = join(ctx.workspace.dataDir, 'versions');
  const written = (await readdir(dir)).filter((name) => name.endsWith('.md'));
  assert.is(written.length, 6, 'five demo changelogs and the hostile one');
  for (const version of versions) {
    const name = `${version.id}.md`;
    if (written.includes(name)) assert.is(version.changelog, await readFile(join(dir, name), 'utf8'), version.id);
    else assert.not.ok('changelog' in version, version.id);
  }
});

served('the latest endpoints carry it; rendered with changelogHtml, hostile Markdown stays harmless', async () => {
  const paper = (await (await fetch(`${ctx.origin.url}/api/plugin-versions/latest/papermc/17`)).json()) as {
    version: Version;
  };
  assert.is(paper.version.pluginVersion, '1.4.0');
  assert.match(paper.version.changelog!, /^## 1\.4\.0\n/);
  const spigot = (await (await fetch(`${ctx.origin.url}/api/plugin-versions/latest/bukkit/8`)).json()) as {
    version: Version;
  };
  assert.is(spigot.version.id, HOSTILE_ID);
  assert.is(spigot.version.changelog, HOSTILE, 'JSON carries the Markdown as written');
  const rendered = changelogHtml(spigot.version.changelog!);
  assert.match(rendered, /<h3>1\.0\.0<\/h3>/);
  assert.match(rendered, /First release\./);
  assert.not.match(rendered, /<script|onerror/i, rendered);
});
served.run();

const refused = suite('changelogs: refused at load');
const firstId = async (dataDir: string) =>
  (await readdir(join(dataDir, 'versions')))
    .filter((n) => n.endsWith('.json'))
    .sort()[0]!
    .replace(/\.json$/, '');
const refusedCases: [string, (dataDir: string) => Promise<unknown>, RegExp][] = [
  [
    'larger than 64 KiB',
    async (dataDir) =>
      writeFile(join(dataDir, 'versions', `${await firstId(dataDir)}.md`), `# big\n\n${'x'.repeat(65_536)}`),
    /plugin-\d+-\w+\.md: 65543 bytes; a changelog holds at most 65536 bytes/,
  ],
  [
    'not UTF-8',
    async (dataDir) =>
      writeFile(join(dataDir, 'versions', `${await firstId(dataDir)}.md`), Buffer.from([0x23, 0x20, 0xff, 0xfe, 0x0a])),
    /plugin-\d+-\w+\.md: not valid UTF-8/,
  ],
  [
    'blank',
    async (dataDir) => writeFile(join(dataDir, 'versions', `${await firstId(dataDir)}.md`), ' \n\n'),
    /plugin-\d+-\w+\.md: \(root\): is empty; write the notes or remove the file/,
  ],
  [
    'with a bidi override',
    async (dataDir) =>
      writeFile(join(dataDir, 'versions', `${await firstId(dataDir)}.md`), '## 1.0\n\nx \u202Egnp.jar\n'),
    /plugin-\d+-\w+\.md: \(root\): contains a format character \(U\+202E\)/,
  ],
  [
    'with a control character',
    async (dataDir) => writeFile(join(dataDir, 'versions', `${await firstId(dataDir)}.md`), '## 1.0\n\nbell \u0007\n'),
    /plugin-\d+-\w+\.md: \(root\): contains a control character \(U\+0007\)/,
  ],
  [
    'without its record',
    async (dataDir) => writeFile(join(dataDir, 'versions', 'plugin-1-typo.md'), '## notes\n'),
    /plugin-1-typo\.md: a changelog without its record plugin-1-typo\.json/,
  ],
];
for (const [name, corrupt, message] of refusedCases) {
  refused(`a changelog ${name}`, () => assertRefusesData(corrupt, loadCatalog, message));
}
refused.run();

// Changelogs in data/ beyond the render limits (written by hand, or before the limits): the build
// succeeds and every page and feed shows them as text. Refusing them at load would stop every build,
// and with it `npm start`, until data/ was edited by hand.
const beyondLimits = suite('changelogs in data/ beyond the render limits');
const beyondCtx = {} as { workspace: Workspace; origin: RunningOrigin };
const NESTED_ID = 'plugin-1768035600000-f8d161e085';
const EMPHASIS_ID = 'plugin-1768035900000-7e709249d7';
beyondLimits.before(async () => {
  beyondCtx.workspace = await makeWorkspace({ build: false });
  const versions = join(beyondCtx.workspace.dataDir, 'versions');
  await writeFile(join(versions, `${NESTED_ID}.md`), `${'>'.repeat(5000)} deep\n`);
  await writeFile(join(versions, `${EMPHASIS_ID}.md`), '**_a'.repeat(16_384));
});
beyondLimits.after(async () => {
  await beyondCtx.origin?.close();
  await beyondCtx.workspace.remove();
});
beyondLimits(
  'the build succeeds in reasonable time; the feeds answer with the text; the API serves the Markdown',
  async () => {
    const started = Date.now();
    await runBuild({
      dataDir: beyondCtx.workspace.dataDir,
      distDir: beyondCtx.workspace.distDir,
      cacheDir: SHARED_BUILD_CACHE,
    });
    assert.ok(Date.now() - started < 60_000, `${Date.now() - started} ms`);
    beyondCtx.origin = await startTestOrigin(beyondCtx.workspace);
    // The feed of all releases (precomputed by the build) and a software's in another letter case (answered live).
    const feeds = { '/api/plugin-versions/feed.atom': 2, '/api/plugin-versions/feed/Spigot.atom': 1 };
    for (const [path, count] of Object.entries(feeds)) {
      const response = await fetch(beyondCtx.origin.url + path);
      const body = await response.text();
      assert.is(response.status, 200, path);
      assert.is(body.split('<pre>').length - 1, count, path);
      assert.ok(body.includes('<pre>&#62;&#62;&#62;'), `${path}: the nested changelog as text`);
      if (count === 2) assert.ok(body.includes('<pre>**_a**_a'), `${path}: the emphasis changelog as text`);
    }
    const answer = (await (await fetch(`${beyondCtx.origin.url}/api/plugin-versions`)).json()) as {
      versions: Version[];
    };
    assert.is(answer.versions.find((v) => v.id === EMPHASIS_ID)?.changelog, '**_a'.repeat(16_384));
  },
);
beyondLimits.run();
