import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makePluginJar } from '../build/plugin-jar.ts';
import { RefusedError } from '../build/changes/refused.ts';
import { releaseJar } from '../build/changes/release.ts';
import { versionPagePath } from '../server/page-paths.ts';
import type { PluginVersion } from '../server/versions/schema.ts';
import { makeWorkspace, runDepot, snapshotFiles, startTestOrigin, type Workspace } from './helpers.ts';

// Issue 31 item 1: a release reads the JAR's descriptors and refuses a --software claim they do not
// back, through `npm run depot -- release` as an operator types it; data/ is left byte for byte.

const PLUGIN_YML = 'name: Checked\nversion: 2.0.0\nmain: org.example.Checked\n';
const PAPER_YML = "name: Checked\nversion: 2.0.0\nmain: org.example.Checked\napi-version: '1.21'\n";
const BUNGEE_YML = 'name: Checked\nversion: 2.0.0\nmain: org.example.CheckedBungee\n';
const VELOCITY_JSON = JSON.stringify({ id: 'checked', main: 'org.example.CheckedVelocity' });

const ctx = {} as { workspace: Workspace; count: number };
const SILENT = { log: () => {}, written: () => {} };

async function release(files: Record<string, string>, software: string, ...more: string[]) {
  const jar = join(ctx.workspace.dir, `Checked-${++ctx.count}.jar`);
  // The count makes each JAR's bytes unique, so no case is refused as a duplicate instead.
  await writeFile(jar, makePluginJar({ files: { ...files, 'README.txt': `case ${ctx.count}\n` } }));
  return runDepot(
    ['release', jar, '--version', `2.0.${ctx.count}`, '--java', '21', '--software', software, ...more],
    ctx.workspace,
  );
}

/** A claim, a JAR, and the one line that refuses it. */
const FALSE_CLAIMS: [string, Record<string, string>, string, RegExp][] = [
  [
    'Folia without folia-supported',
    { 'plugin.yml': PLUGIN_YML },
    'PaperMC,Folia',
    /^depot release: --software Folia: plugin\.yml lacks "folia-supported: true" \(Folia loads only plugins that declare it\); add it, or pass --no-descriptor-check \(over HTTP: "descriptorCheck": false in the metadata\)$/,
  ],
  [
    'CanvasMC with folia-supported: false',
    { 'plugin.yml': `${PLUGIN_YML}folia-supported: false\n` },
    'CanvasMC',
    /^depot release: --software CanvasMC: plugin\.yml lacks "folia-supported: true"/,
  ],
  [
    'Folia, where paper-plugin.yml (which Paper loads first) lacks the key plugin.yml has',
    { 'plugin.yml': `${PLUGIN_YML}folia-supported: true\n`, 'paper-plugin.yml': PAPER_YML },
    'Folia',
    /^depot release: --software Folia: paper-plugin\.yml lacks "folia-supported: true"/,
  ],
  [
    'Spigot for a Paper plugin',
    { 'paper-plugin.yml': PAPER_YML },
    'PaperMC,Spigot',
    /^depot release: --software Spigot: paper-plugin\.yml is the JAR's only descriptor \(Paper plugins never load on Spigot, which reads plugin\.yml\); add a plugin\.yml, or leave Spigot out, or pass --no-descriptor-check \(over HTTP: "descriptorCheck": false in the metadata\)$/,
  ],
  ['Bukkit for a Paper plugin', { 'paper-plugin.yml': PAPER_YML }, 'Bukkit', /--software Bukkit: paper-plugin\.yml/],
  [
    'Velocity without velocity-plugin.json',
    { 'plugin.yml': PLUGIN_YML },
    'Velocity',
    /^depot release: --software Velocity: the JAR has no velocity-plugin\.json \(Velocity loads plugins by it\); add one, or pass --no-descriptor-check \(over HTTP: "descriptorCheck": false in the metadata\)$/,
  ],
  [
    'BungeeCord with a Bukkit plugin.yml',
    { 'plugin.yml': `${PLUGIN_YML}api-version: '1.21'\ncommands:\n  checked: {}\n` },
    'BungeeCord',
    /^depot release: --software BungeeCord: the JAR has no bungee\.yml and its plugin\.yml is a Bukkit one .*; add a bungee\.yml, or pass --no-descriptor-check \(over HTTP: "descriptorCheck": false in the metadata\)$/,
  ],
  [
    'Waterfall beside Spigot with one plugin.yml (it names one main class)',
    { 'plugin.yml': PLUGIN_YML },
    'Spigot,Waterfall',
    /^depot release: --software Waterfall: the JAR has no bungee\.yml/,
  ],
  [
    'BungeeCord with only velocity-plugin.json',
    { 'velocity-plugin.json': VELOCITY_JSON },
    'Velocity,BungeeCord',
    /^depot release: --software BungeeCord: the JAR has neither bungee\.yml nor plugin\.yml/,
  ],
  ...(['PaperMC', 'Purpur', 'LeafMC'] as const).map((software): [string, Record<string, string>, string, RegExp] => [
    `${software} with only bungee.yml`,
    { 'bungee.yml': BUNGEE_YML },
    software,
    new RegExp(
      `^depot release: --software ${software}: the JAR has neither plugin\\.yml nor paper-plugin\\.yml \\(${software} loads plugins by them\\); add a plugin\\.yml or a paper-plugin\\.yml, or pass --no-descriptor-check \\(over HTTP: "descriptorCheck": false in the metadata\\)$`,
    ),
  ]),
  [
    'Spigot with only velocity-plugin.json',
    { 'velocity-plugin.json': VELOCITY_JSON },
    'Spigot',
    /^depot release: --software Spigot: the JAR has no plugin\.yml \(Spigot loads plugins by it\); add one/,
  ],
];

/** Descriptors as an attacker or a broken build writes them: each one line naming the file, never a crash. */
const HOSTILE: [string, Record<string, string>, RegExp][] = [
  [
    'a plugin.yml over 256 KiB',
    { 'plugin.yml': `${PLUGIN_YML}description: ${'x'.repeat(300_000)}\n` },
    /^depot release: plugin\.yml is 300\d\d\d bytes; a descriptor may hold at most 262144 bytes, or pass --no-descriptor-check \(over HTTP: "descriptorCheck": false in the metadata\)$/,
  ],
  [
    'an alias bomb',
    {
      'plugin.yml': `${PLUGIN_YML}a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n`,
    },
    /^depot release: plugin\.yml: not valid YAML \(Excessive alias count/,
  ],
  [
    'lists nested 100,000 deep',
    { 'plugin.yml': `${PLUGIN_YML}deep: ${'['.repeat(100_000)}` },
    /^depot release: plugin\.yml: nests \[ and \{ deeper than 64 levels; fix the file/,
  ],
  [
    '27,000 keys (the YAML library checks them for duplicates pair by pair)',
    { 'plugin.yml': `${PLUGIN_YML}${Array.from({ length: 27_000 }, (_, i) => `k${i.toString(36)}: 0\n`).join('')}` },
    /^depot release: plugin\.yml: holds 2700\d keys or more; a descriptor may hold at most 5000; fix the file/,
  ],
  [
    '27,000 keys in one flow mapping',
    {
      'plugin.yml': `${PLUGIN_YML}x: {${Array.from({ length: 27_000 }, (_, i) => `${i.toString(36)}: 0`).join(', ')}}\n`,
    },
    /^depot release: plugin\.yml: holds 2700\d keys or more; a descriptor may hold at most 5000; fix the file/,
  ],
  [
    'depend as a string',
    { 'plugin.yml': `${PLUGIN_YML}depend: Vault\n` },
    /^depot release: plugin\.yml: depend: Invalid input: expected array, received string; fix the file/,
  ],
  [
    'folia-supported as a string',
    { 'plugin.yml': `${PLUGIN_YML}folia-supported: "true"\n` },
    /^depot release: plugin\.yml: folia-supported: .*; fix the file/,
  ],
  [
    'a name with a bell and a bidi override',
    { 'plugin.yml': 'name: "Evil\\a\\u202Egnp"\nmain: org.example.Evil\n' },
    /^depot release: plugin\.yml: name: must be 1 to 64 letters/,
  ],
  [
    'a dependency key with control characters',
    {
      'paper-plugin.yml': `${PAPER_YML}dependencies:\n  server:\n    "Bad\\u0007Name\\u202E": { required: true }\n`,
    },
    /^depot release: paper-plugin\.yml: dependencies\.server\.Bad\\u0007Name\\u202e: Invalid key in record; fix the file/,
  ],
  [
    'velocity-plugin.json that is not JSON',
    { 'velocity-plugin.json': '{"id": "checked", ' },
    /^depot release: velocity-plugin\.json: not valid JSON/,
  ],
  [
    'a YAML list, not a mapping',
    { 'plugin.yml': '- name\n- main\n' },
    /^depot release: plugin\.yml: must be a mapping/,
  ],
];

const refused = suite('depot release: claims the JAR does not back, and hostile descriptors');
refused.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.count = 0;
});
refused.after(() => ctx.workspace.remove());

for (const [name, files, software, message] of FALSE_CLAIMS)
  refused(`${name}: one line, exit 1, data/ byte-identical`, async () => {
    const before = await snapshotFiles(ctx.workspace.dataDir);
    const result = await release(files, software);
    assert.is(result.code, 1, result.stderr);
    assert.match(result.stderr.trim(), message);
    assert.is(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.equal(await snapshotFiles(ctx.workspace.dataDir), before);
  });

for (const [name, files, message] of HOSTILE)
  refused(`${name}: one line naming the file, exit 1, data/ byte-identical`, async () => {
    const before = await snapshotFiles(ctx.workspace.dataDir);
    const result = await release(files, 'PaperMC');
    assert.is(result.code, 1, result.stderr);
    assert.match(result.stderr.trim(), message);
    assert.is(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.ok(result.stderr.length < 600, `${result.stderr.length} characters`);
    assert.equal(await snapshotFiles(ctx.workspace.dataDir), before);
  });

refused(
  'the refusal as the publishing API gets it from the release: its message and serverSoftware (its 400)',
  async () => {
    const jar = join(ctx.workspace.dir, 'Api.jar');
    await writeFile(jar, makePluginJar({ files: { 'plugin.yml': PLUGIN_YML } }));
    const request = { file: jar, version: '2.1.0', java: '21' as const, software: ['Folia' as const] };
    const before = await snapshotFiles(ctx.workspace.dataDir);
    const error = await releaseJar(request, ctx.workspace, new Date(), SILENT).then(
      () => assert.unreachable('released'),
      (refused: unknown) => refused,
    );
    assert.instance(error, RefusedError);
    assert.match((error as RefusedError).message, /^--software Folia: plugin\.yml lacks "folia-supported: true"/);
    assert.equal((error as RefusedError).refusal, { kind: 'field', field: 'serverSoftware' });
    assert.equal(await snapshotFiles(ctx.workspace.dataDir), before);
  },
);

/** A truthful JAR for each descriptor kind, and what its record stores. */
const TRUTHFUL: [string, Record<string, string>, string, Record<string, unknown>][] = [
  [
    'plugin.yml with folia-supported for PaperMC and Folia',
    {
      'plugin.yml': `${PLUGIN_YML}api-version: '1.21'\nfolia-supported: true\ndepend: [Vault]\nsoftdepend: [PlaceholderAPI, LuckPerms]\n`,
    },
    'PaperMC,Folia',
    { foliaSupported: true, apiVersion: '1.21', depend: ['Vault'], softdepend: ['PlaceholderAPI', 'LuckPerms'] },
  ],
  [
    'paper-plugin.yml alone for PaperMC and Purpur, its server dependencies mapped',
    {
      'paper-plugin.yml': `${PAPER_YML}dependencies:\n  server:\n    Vault:\n      load: BEFORE\n    LuckPerms:\n      required: false\n`,
    },
    'PaperMC,Purpur',
    { apiVersion: '1.21', depend: ['Vault'], softdepend: ['LuckPerms'] },
  ],
  [
    'velocity-plugin.json, its optional dependencies soft',
    {
      'velocity-plugin.json': JSON.stringify({
        id: 'checked',
        main: 'org.example.CheckedVelocity',
        dependencies: [{ id: 'luckperms' }, { id: 'geyser', optional: true }],
      }),
    },
    'Velocity',
    { depend: ['luckperms'], softdepend: ['geyser'] },
  ],
  [
    'bungee.yml beside a Bukkit plugin.yml, for Spigot, BungeeCord and Waterfall',
    {
      'plugin.yml': `${PLUGIN_YML}api-version: '1.20'\n`,
      'bungee.yml': `${BUNGEE_YML}depends: [LuckPerms]\nsoftDepends: [Geyser-BungeeCord]\n`,
    },
    'Spigot,BungeeCord,Waterfall',
    { apiVersion: '1.20' },
  ],
  [
    "a plugin.yml with BungeeCord's keys, for BungeeCord",
    { 'plugin.yml': `${BUNGEE_YML}author: someone\ndepends: [LuckPerms]\n` },
    'BungeeCord',
    { depend: ['LuckPerms'] },
  ],
  ['Quilt, whose loader reads none of these, with plugin.yml', { 'plugin.yml': PLUGIN_YML }, 'Quilt', {}],
];

const DECLARED = ['foliaSupported', 'apiVersion', 'depend', 'softdepend', 'descriptorWarnings'];
const declaredOf = (record: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(record).filter(([key]) => DECLARED.includes(key)));

const accepted = suite('depot release: truthful descriptors, stored as declared');
accepted.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.count = 0;
});
accepted.after(() => ctx.workspace.remove());

for (const [name, files, software, declared] of TRUTHFUL)
  accepted(`${name}: released, the record stores what it declares`, async () => {
    const result = await release(files, software);
    assert.is(result.code, 0, result.stderr);
    const record = JSON.parse(result.stdout) as Record<string, unknown>;
    assert.equal(declaredOf(record), declared);
    const stored = JSON.parse(await readFile(join(ctx.workspace.dataDir, 'versions', `${record.id}.json`), 'utf8'));
    assert.equal(declaredOf(stored), declared);
  });

accepted('--no-descriptor-check releases a false claim with a warning, kept in the record', async () => {
  const result = await release(
    { 'plugin.yml': `${PLUGIN_YML}api-version: '1.21'\n` },
    'Folia,Velocity',
    '--no-descriptor-check',
  );
  assert.is(result.code, 0, result.stderr);
  assert.match(
    result.stderr,
    /\[depot\] warning: released with --no-descriptor-check although --software Folia: plugin\.yml lacks "folia-supported: true"/,
  );
  assert.match(result.stderr, /although --software Velocity: the JAR has no velocity-plugin\.json/);
  const record = JSON.parse(result.stdout) as Record<string, unknown>;
  assert.equal(declaredOf(record), {
    apiVersion: '1.21',
    descriptorWarnings: [
      '--software Folia: plugin.yml lacks "folia-supported: true" (Folia loads only plugins that declare it)',
      '--software Velocity: the JAR has no velocity-plugin.json (Velocity loads plugins by it)',
    ],
  });
});

accepted(
  '--no-descriptor-check releases a JAR whose descriptor is malformed, storing nothing it declares',
  async () => {
    const result = await release({ 'plugin.yml': `${PLUGIN_YML}depend: Vault\n` }, 'PaperMC', '--no-descriptor-check');
    assert.is(result.code, 0, result.stderr);
    const record = JSON.parse(result.stdout) as Record<string, unknown>;
    assert.equal(declaredOf(record), {
      descriptorWarnings: ['plugin.yml: depend: Invalid input: expected array, received string; fix the file'],
    });
  },
);

accepted('the version API answers the declared fields; a record without them answers as before', async () => {
  const result = await release(
    { 'plugin.yml': `${PLUGIN_YML}folia-supported: true\napi-version: '1.21'\ndepend: [Vault]\n` },
    'Folia',
  );
  assert.is(result.code, 0, result.stderr);
  const { id } = JSON.parse(result.stdout) as { id: string };
  const origin = await startTestOrigin(ctx.workspace);
  try {
    const answer = (await (await fetch(`${origin.url}/api/plugin-versions/${id}`)).json()) as {
      version: PluginVersion;
    };
    assert.equal(declaredOf(answer.version), { foliaSupported: true, apiVersion: '1.21', depend: ['Vault'] });
    const list = (await (await fetch(`${origin.url}/api/plugin-versions`)).json()) as { versions: PluginVersion[] };
    // The demo's Velocity and BungeeCord records declare nothing: no field, not even empty.
    const proxies = list.versions.filter(
      (v) => v.serverSoftware.includes('Velocity') && v.fileName.startsWith('DepotDemo'),
    );
    assert.ok(proxies.length > 0);
    for (const version of proxies) assert.equal(declaredOf(version as unknown as Record<string, unknown>), {});
  } finally {
    await origin.close();
  }
});

refused.run();
accepted.run();

const page = suite('the version page: declared by the JAR');
page.before(async () => {
  ctx.workspace = await makeWorkspace({ site: true, build: false });
  ctx.count = 0;
});
page.after(() => ctx.workspace.remove());

page('shows Folia support, the API version and dependencies when declared, nothing otherwise', async () => {
  const result = await release(
    {
      'plugin.yml': `${PLUGIN_YML}folia-supported: true\napi-version: '1.21'\ndepend: [Vault]\nsoftdepend: [LuckPerms, Geyser-Spigot]\n`,
    },
    'PaperMC,Folia',
  );
  assert.is(result.code, 0, result.stderr);
  const { id } = JSON.parse(result.stdout) as { id: string };
  const origin = await startTestOrigin(ctx.workspace);
  try {
    const html = await (await fetch(origin.url + versionPagePath(id))).text();
    assert.match(html, /<h2 id="declared">Declared by the JAR<\/h2>/);
    assert.match(html, /data-declared="foliaSupported"[^>]*>Yes \(folia-supported: true\)</);
    assert.match(html, /data-declared="apiVersion"[^>]*>1\.21</);
    assert.match(html, /data-declared="depend"[^>]*>Vault</);
    assert.match(html, /data-declared="softdepend"[^>]*>LuckPerms, Geyser-Spigot</);
    // The demo's Velocity 1.3.0 declares nothing: no section.
    const list = (await (await fetch(`${origin.url}/api/plugin-versions`)).json()) as { versions: PluginVersion[] };
    const velocity = list.versions.find((v) => v.serverSoftware.includes('Velocity'))!;
    const bare = await (await fetch(origin.url + versionPagePath(velocity.id))).text();
    assert.not.match(bare, /Declared by the JAR/);
  } finally {
    await origin.close();
  }
});

page.run();
