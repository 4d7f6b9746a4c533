import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { loadCatalog } from '../server/versions/catalog.ts';
import { changelogHtml } from '../server/versions/changelog.ts';
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
html.run();

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
  assert.is(written.length, 5, 'four demo changelogs and the hostile one');
  for (const version of versions) {
    const name = `${version.id}.md`;
    if (written.includes(name)) assert.is(version.changelog, await readFile(join(dir, name), 'utf8'), version.id);
    else assert.not.ok('changelog' in version, version.id);
  }
});

served('the latest endpoints carry it; rendered with changelogHtml, hostile Markdown stays harmless', async () => {
  const paper = (await (await fetch(`${ctx.origin.url}/api/plugin-versions/latest/papermc`)).json()) as {
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
    'without its record',
    async (dataDir) => writeFile(join(dataDir, 'versions', 'plugin-1-typo.md'), '## notes\n'),
    /plugin-1-typo\.md: a changelog without its record plugin-1-typo\.json/,
  ],
];
for (const [name, corrupt, message] of refusedCases) {
  refused(`a changelog ${name}`, () => assertRefusesData(corrupt, loadCatalog, message));
}
refused.run();
