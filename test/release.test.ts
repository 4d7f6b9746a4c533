import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseDisposition } from 'content-disposition';
import { strToU8, zipSync } from 'fflate';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeWorkspace, pluginJar, runDepot, snapshotFiles, startTestOrigin, type Workspace } from './helpers.ts';

const ctx = {} as { workspace: Workspace; jar: string };

const refusals = suite('depot release: refusals');
refusals.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.jar = join(ctx.workspace.dir, 'TestPlugin-2.0.0.jar');
  await writeFile(ctx.jar, pluginJar('2.0.0'));
});
refusals.after(() => ctx.workspace.remove());

const refusalCases: [string, (jar: string, dir: string) => Promise<string[]>, RegExp][] = [
  [
    'unknown software, listing the valid names',
    async (jar) => [jar, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC,Forge'],
    /--software: Unknown server software "Forge"; expected one of PaperMC, Spigot, Bukkit, Purpur, Quilt, LeafMC, Folia, CanvasMC, BungeeCord, Waterfall, Velocity/,
  ],
  [
    'bad Java version',
    async (jar) => [jar, '--version', '2.0.0', '--java', '16', '--software', 'PaperMC'],
    /--java: Unknown Java version "16"; expected one of 8, 11, 17, 21/,
  ],
  [
    'a version that is not semver',
    async (jar) => [jar, '--version', 'v2.0', '--java', '21', '--software', 'PaperMC'],
    /--version: must be a semantic version/,
  ],
  [
    'a file that is not a JAR',
    async (_jar, dir) => {
      const fake = join(dir, 'fake.jar');
      await writeFile(fake, 'this is not a zip');
      return [fake, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC'];
    },
    /fake\.jar is not a zip\/JAR archive/,
  ],
  [
    'a zip without manifest or descriptor',
    async (_jar, dir) => {
      const zip = join(dir, 'data.jar');
      await writeFile(zip, zipSync({ 'hello.txt': strToU8('hi') }));
      return [zip, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC'];
    },
    /without META-INF\/MANIFEST\.MF or a plugin descriptor/,
  ],
  [
    'an exact duplicate of a released JAR',
    async (_jar, dir) => [
      join(dir, 'data/jars', (await readdir(join(dir, 'data/jars')))[0]!),
      '--version',
      '9.9.9',
      '--java',
      '21',
      '--software',
      'PaperMC',
    ],
    /is already released as plugin-\d+-\w+ \(same sha256\)/,
  ],
  [
    'the same version, Java and software again',
    async (_jar, dir) => {
      const other = join(dir, 'again.jar');
      await writeFile(other, pluginJar('rebuilt', ['Folia']));
      return [other, '--version', '1.3.0', '--java', '21', '--software', 'Purpur,PaperMC,Folia'];
    },
    /version 1\.3\.0 for Java 21 and Purpur, PaperMC, Folia is already released as plugin-/,
  ],
  [
    'a missing file',
    async (_jar, dir) => [join(dir, 'nope.jar'), '--version', '2.0.0', '--java', '21', '--software', 'PaperMC'],
    /cannot read .*nope\.jar: ENOENT/,
  ],
  ['no --software', async (jar) => [jar, '--version', '2.0.0', '--java', '21'], /--software: missing --software/],
  [
    'a file not named .jar',
    async (_jar, dir) => {
      const zip = join(dir, 'plugin.zip');
      await writeFile(zip, pluginJar('zip'));
      return [zip, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC'];
    },
    /cannot release .*plugin\.zip: fileName: must be a file name ending in \.jar/,
  ],
  [
    'an unknown channel',
    async (jar) => [jar, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC', '--channel', 'nightly'],
    /--channel: must be one of release, beta, alpha/,
  ],
  [
    'a changelog that cannot be read',
    async (jar, dir) => [
      jar,
      '--version',
      '2.0.0',
      '--java',
      '21',
      '--software',
      'PaperMC',
      '--changelog',
      join(dir, 'nope.md'),
    ],
    /--changelog: cannot read .*nope\.md: ENOENT/,
  ],
  [
    'a changelog over 64 KiB',
    async (jar, dir) => {
      const notes = join(dir, 'huge.md');
      await writeFile(notes, 'x'.repeat(70_000));
      return [jar, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC', '--changelog', notes];
    },
    /--changelog: .*huge\.md: 70000 bytes; a changelog holds at most 65536 bytes/,
  ],
  [
    'a changelog that is not UTF-8',
    async (jar, dir) => {
      const notes = join(dir, 'latin1.md');
      await writeFile(notes, Buffer.from('## Caf\xe9\n', 'latin1'));
      return [jar, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC', '--changelog', notes];
    },
    /--changelog: .*latin1\.md: not valid UTF-8/,
  ],
  [
    "a changelog of about 5 KB of nested block quotes (it overflowed the renderer's stack)",
    async (jar, dir) => {
      const notes = join(dir, 'deep.md');
      await writeFile(notes, `${'>'.repeat(5000)} deep\n`);
      return [jar, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC', '--changelog', notes];
    },
    /--changelog: .*deep\.md: line 1 nests more than 32 block quotes and list items/,
  ],
  [
    'a changelog of 64 KiB of **_a (29 s to render)',
    async (jar, dir) => {
      const notes = join(dir, 'emphasis.md');
      await writeFile(notes, '**_a'.repeat(16_384));
      return [jar, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC', '--changelog', notes];
    },
    /--changelog: .*emphasis\.md: the paragraph from line 1 has more than 500 runs of \* or _; separate it into paragraphs with blank lines/,
  ],
  [
    'a changelog with a bidi override',
    async (jar, dir) => {
      const notes = join(dir, 'bidi.md');
      await writeFile(notes, '## 2.0.0\n\nFixed \u202Eevil\n');
      return [jar, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC', '--changelog', notes];
    },
    /--changelog: .*bidi\.md: \(root\): contains a format character \(U\+202E\); control characters and bidi overrides are not allowed/,
  ],
  [
    'a proxy version with a control character',
    async (jar) => [jar, '--version', '2.0.0', '--java', '21', '--software', 'Velocity', '--proxy', '3.4\u0007'],
    /--proxy: contains a control character \(U\+0007\)/,
  ],
  [
    'a proxy version with "]]>"',
    async (jar) => [jar, '--version', '2.0.0', '--java', '21', '--software', 'Velocity', '--proxy', '3]]>4]]>'],
    /--proxy: contains "\]\]>", which is not allowed/,
  ],
  [
    'a Minecraft snapshot name with an escape character',
    async (jar) => [
      jar,
      '--version',
      '2.0.0',
      '--java',
      '21',
      '--software',
      'PaperMC',
      '--minecraft',
      '24w14a\u001b[2J',
    ],
    /--minecraft: contains a control character \(U\+001B\)/,
  ],
  [
    'a Minecraft snapshot name with "]]>"',
    async (jar) => [jar, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC', '--minecraft', 'a]]>b'],
    /--minecraft: contains "\]\]>", which is not allowed/,
  ],
  [
    'an uploader name with a zero-width space',
    async (jar) => [jar, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC', '--by', 'bo\u200bb'],
    /--by: contains a format character \(U\+200B\)/,
  ],
  [
    'an option without its value',
    async (jar) => [jar, '--software', 'PaperMC', '--java', '21', '--version'],
    /Option '--version <value>' argument missing/,
  ],
  [
    'a Minecraft range that runs backwards',
    async (jar) => [jar, '--version', '2.0.0', '--java', '21', '--software', 'PaperMC', '--minecraft', '1.21.4-1.20.6'],
    /--minecraft: "1\.21\.4-1\.20\.6" runs backwards; write the lower version first/,
  ],
  [
    'a Minecraft list with a malformed item',
    async (jar) => [
      jar,
      '--version',
      '2.0.0',
      '--java',
      '21',
      '--software',
      'PaperMC',
      '--minecraft',
      '1.20.6,1.21-1.21.1-1.21.4',
    ],
    /--minecraft: "1\.21-1\.21\.1-1\.21\.4" is not a version, a range or a minor version; write 1\.21\.4, 1\.20\.6-1\.21\.4 or 1\.21\.x/,
  ],
];
for (const [name, args, message] of refusalCases) {
  refusals(`refuses ${name} with exit 1 and one line`, async () => {
    const before = await readdir(join(ctx.workspace.dataDir, 'versions'));
    const result = await runDepot(['release', ...(await args(ctx.jar, ctx.workspace.dir))], ctx.workspace);
    assert.is(result.code, 1);
    assert.is(result.stdout, '');
    assert.is(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.match(result.stderr, message);
    assert.equal(await readdir(join(ctx.workspace.dataDir, 'versions')), before, 'nothing written');
  });
}
refusals.run();

const names = suite("depot release: the JAR's file name");
names.before(async () => {
  ctx.workspace = await makeWorkspace({ build: false });
});
names.after(() => ctx.workspace.remove());

// The name is stored in the record and served in Content-Disposition: control characters would
// split log lines and headers, and a terminal would act on C1 ones.
const nameCases: [string, string, RegExp][] = [
  [
    'a newline',
    'Evil\nPlugin.jar',
    /file name "Evil\\u000aPlugin\.jar" contains a control character \(U\+000A\); rename the file$/,
  ],
  ['a carriage return', 'Evil\r.jar', /contains a control character \(U\+000D\)/],
  ['a tab', 'Evil\tPlugin.jar', /contains a control character \(U\+0009\)/],
  ['an escape (C0)', 'Evil\u001b[31mPlugin.jar', /contains a control character \(U\+001B\)/],
  ['DEL', 'Evil\u007fPlugin.jar', /contains a control character \(U\+007F\)/],
  ['a C1 next-line', 'Evil\u0085Plugin.jar', /contains a control character \(U\+0085\)/],
  ['a C1 CSI', 'Evil\u009b31mPlugin.jar', /"Evil\\u009b31mPlugin\.jar" contains a control character \(U\+009B\)/],
  [
    'a right-to-left override (x\u202Egnp.jar shows as xraj.png)',
    'x\u202Egnp.jar',
    /file name "x\\u202egnp\.jar" contains a format character \(U\+202E\); rename the file$/,
  ],
  ['a zero-width space', 'Evil\u200bPlugin.jar', /contains a format character \(U\+200B\)/],
  ['a byte order mark', '\ufeffEvil.jar', /contains a format character \(U\+FEFF\)/],
  ['a line separator', 'Evil\u2028Plugin.jar', /contains a line or paragraph separator \(U\+2028\)/],
  [
    '"]]>" twice (it ended the feeds\' CDATA sections)',
    'a]]>b]]>.jar',
    /file name a\]\]>b\]\]>\.jar contains "\]\]>"; rename the file$/,
  ],
  [
    'a backslash (a path separator elsewhere)',
    'Evil\\Plugin.jar',
    /fileName: must be a file name ending in \.jar, without control characters/,
  ],
];
for (const [name, fileName, message] of nameCases) {
  names(`refuses a file name with ${name}: one line, exit 1, data/ byte for byte as it was`, async () => {
    const jar = join(ctx.workspace.dir, fileName);
    await writeFile(jar, pluginJar(`name-${fileName.length}-${fileName.codePointAt(4)}`));
    const before = await snapshotFiles(ctx.workspace.dataDir);
    const result = await runDepot(
      ['release', jar, '--version', '7.0.0', '--java', '21', '--software', 'PaperMC'],
      ctx.workspace,
    );
    assert.is(result.code, 1, result.stderr);
    assert.is(result.stdout, '');
    assert.is(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.not.match(
      result.stderr,
      /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/,
      'the refusal itself carries no control character',
    );
    assert.not.match(result.stderr, /[\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/, 'nor a format character');
    assert.match(result.stderr.trim(), message);
    assert.equal(await snapshotFiles(ctx.workspace.dataDir), before, 'data/ untouched');
  });
}
names.run();

const release = suite('depot release: publishing');
release.before(async () => {
  ctx.workspace = await makeWorkspace();
});
release.after(() => ctx.workspace.remove());

release('stores JAR and record, rebuilds, prints the record; a running origin serves it without restart', async () => {
  const origin = await startTestOrigin(ctx.workspace);
  const jar = join(ctx.workspace.dir, 'Plügin Ünïcode-2.0.0.jar');
  await writeFile(jar, pluginJar('2.0.0', ['PaperMC', 'Folia']));
  const path = `${origin.url}/api/plugin-versions/latest/papermc/21`;
  const before = ((await (await fetch(path)).json()) as { version: { id: string } }).version.id;

  // A client loops on the latest endpoint while the release runs: no request may fail.
  let failures = 0;
  let requests = 0;
  let seen = before;
  let releasing = true;
  const client = (async () => {
    const deadline = Date.now() + 60_000;
    while ((releasing || seen === before) && Date.now() < deadline && requests < 20_000) {
      requests++;
      try {
        const response = await fetch(path);
        if (response.status !== 200) failures++;
        else seen = ((await response.json()) as { version: { id: string } }).version.id;
      } catch {
        failures++;
      }
    }
  })();
  const result = await runDepot(
    [
      'release',
      jar,
      '--version',
      '2.0.0',
      '--java',
      '21',
      '--software',
      'PaperMC,Folia',
      '--minecraft',
      '1.21.4',
      '--by',
      'bob',
    ],
    ctx.workspace,
  );
  releasing = false;
  await client;
  await origin.close();

  assert.is(result.code, 0, result.stderr);
  const record = JSON.parse(result.stdout) as {
    id: string;
    sha256: string;
    fileSize: number;
    fileName: string;
    createdBy: string;
  };
  assert.match(record.id, /^plugin-\d+-[A-Za-z0-9]+$/);
  assert.is(record.fileName, 'Plügin Ünïcode-2.0.0.jar');
  assert.is(record.createdBy, 'bob');
  const stored = await readFile(join(ctx.workspace.dataDir, 'jars', `${record.id}.jar`));
  assert.is(stored.length, record.fileSize);
  assert.equal(
    JSON.parse(await readFile(join(ctx.workspace.dataDir, 'versions', `${record.id}.json`), 'utf8')),
    record,
  );
  assert.ok(requests > 1, 'the client looped');
  assert.is(failures, 0, `${failures} of ${requests} requests failed`);
  assert.is(seen, record.id);
});

release('the released JAR downloads with an RFC 6266 filename* for its non-ASCII name', async () => {
  const origin = await startTestOrigin(ctx.workspace);
  const response = await fetch(`${origin.url}/api/plugin-versions/download/latest/folia`);
  await origin.close();
  assert.is(response.status, 200);
  assert.is(
    response.headers.get('content-disposition'),
    `attachment; filename="Pl?gin ?n?code-2.0.0.jar"; filename*=UTF-8''Pl%C3%BCgin%20%C3%9Cn%C3%AFcode-2.0.0.jar`,
  );
  await response.arrayBuffer();
});
release(
  'a file name with $, quotes, braces and semicolons is released and downloads under its exact name',
  async () => {
    const name = 'Odd $host "quoted" {a;b} x.jar';
    const jar = join(ctx.workspace.dir, name);
    await writeFile(jar, pluginJar('odd-2.1.0', ['Velocity']));
    const result = await runDepot(
      ['release', jar, '--version', '2.1.0', '--java', '17', '--software', 'Velocity', '--proxy', '3.4 "$x"'],
      ctx.workspace,
    );
    assert.is(result.code, 0, result.stderr);
    const record = JSON.parse(result.stdout) as { id: string; fileName: string; proxyVersion: string };
    assert.is(record.fileName, name);
    assert.is(record.proxyVersion, '3.4 "$x"');
    const origin = await startTestOrigin(ctx.workspace);
    const response = await fetch(`${origin.url}/api/plugin-versions/download/${record.id}`);
    await origin.close();
    assert.is(response.status, 200);
    await response.arrayBuffer();
    assert.is(parseDisposition(response.headers.get('content-disposition')!).parameters.filename, name);
  },
);
release('two releases at once: both land in the served tree', async () => {
  const jars = await Promise.all(
    ['3.0.0', '3.0.1'].map(async (version) => {
      const file = join(ctx.workspace.dir, `Concurrent-${version}.jar`);
      await writeFile(file, pluginJar(version));
      return [file, version] as const;
    }),
  );
  const results = await Promise.all(
    jars.map(([file, version]) =>
      runDepot(['release', file, '--version', version, '--java', '11', '--software', 'Quilt'], ctx.workspace),
    ),
  );
  for (const result of results) assert.is(result.code, 0, result.stderr);
  const origin = await startTestOrigin(ctx.workspace);
  const body = (await (await fetch(`${origin.url}/api/plugin-versions`)).json()) as { versions: { id: string }[] };
  await origin.close();
  const ids = new Set(body.versions.map((v) => v.id));
  for (const result of results) assert.ok(ids.has((JSON.parse(result.stdout) as { id: string }).id));
});
release('--changelog and --channel: the notes beside the record, a beta only for clients that ask', async () => {
  const jar = join(ctx.workspace.dir, 'Beta-4.0.0-beta.1.jar');
  const notes = join(ctx.workspace.dir, 'notes.md');
  const markdown = '## 4.0.0-beta.1\n\n- Tries the **new** storage.\n';
  await writeFile(jar, pluginJar('4.0.0-beta.1'));
  await writeFile(notes, markdown);
  const result = await runDepot(
    [
      'release',
      jar,
      '--version',
      '4.0.0-beta.1',
      '--java',
      '21',
      '--software',
      'PaperMC',
      '--changelog',
      notes,
      '--channel',
      'beta',
    ],
    ctx.workspace,
  );
  assert.is(result.code, 0, result.stderr);
  const record = JSON.parse(result.stdout) as { id: string; channel: string };
  assert.is(record.channel, 'beta');
  assert.is(await readFile(join(ctx.workspace.dataDir, 'versions', `${record.id}.md`), 'utf8'), markdown);
  const origin = await startTestOrigin(ctx.workspace);
  const latest = async (query: string) =>
    (
      (await (await fetch(`${origin.url}/api/plugin-versions/latest/papermc/21${query}`)).json()) as {
        version: { id: string; channel: string; changelog?: string };
      }
    ).version;
  const [release, beta] = [await latest(''), await latest('?channel=beta')];
  await origin.close();
  assert.is.not(release.id, record.id, 'a beta is not latest for clients that do not ask');
  assert.is(beta.id, record.id);
  assert.is(beta.channel, 'beta');
  assert.is(beta.changelog, markdown);
});

release('without --channel the record says release', async () => {
  const jar = join(ctx.workspace.dir, 'Plain-5.0.0.jar');
  await writeFile(jar, pluginJar('5.0.0'));
  const result = await runDepot(
    ['release', jar, '--version', '5.0.0', '--java', '8', '--software', 'Quilt'],
    ctx.workspace,
  );
  assert.is(result.code, 0, result.stderr);
  const record = JSON.parse(result.stdout) as { id: string; channel: string };
  assert.is(record.channel, 'release');
  assert.equal(
    (await readdir(join(ctx.workspace.dataDir, 'versions'))).filter((n) => n.startsWith(record.id)),
    [`${record.id}.json`],
    'no changelog file without --changelog',
  );
});
release(
  '--minecraft 1.20.6-1.21.4 stores the range, its highest as minecraftVersion, and resolves inside it only',
  async () => {
    const jar = join(ctx.workspace.dir, 'Ranged-6.0.0.jar');
    await writeFile(jar, pluginJar('6.0.0'));
    const result = await runDepot(
      [
        'release',
        jar,
        '--version',
        '6.0.0',
        '--java',
        '17',
        '--software',
        'Spigot',
        '--minecraft',
        '1.20.6-1.21.4,1.19.x',
      ],
      ctx.workspace,
    );
    assert.is(result.code, 0, result.stderr);
    const record = JSON.parse(result.stdout) as { id: string; minecraftVersion: string; minecraftVersions: unknown };
    assert.is(record.minecraftVersion, '1.21.4');
    assert.equal(record.minecraftVersions, [
      { from: '1.20.6', to: '1.21.4' },
      { from: '1.19', to: '1.19.x' },
    ]);
    const origin = await startTestOrigin(ctx.workspace);
    try {
      const resolve = async (query: string) => {
        const answer = await fetch(`${origin.url}/api/plugin-versions/resolve/spigot/17?${query}`);
        return answer.status === 200
          ? ((await answer.json()) as { version: { id: string } }).version.id
          : answer.status;
      };
      for (const inside of ['1.20.6', '1.21', '1.21.1', '1.21.4', '1.19', '1.19.4'])
        assert.is(await resolve(`minecraft=${inside}`), record.id, inside);
      for (const outside of ['1.20.4', '1.21.5', '1.18.2', '1.20'])
        assert.is.not(await resolve(`minecraft=${outside}`), record.id, outside);
      const list = (await (await fetch(`${origin.url}/api/plugin-versions?minecraft=1.21.1`)).json()) as {
        versions: { id: string; minecraftVersions?: unknown }[];
      };
      assert.equal(list.versions.find((v) => v.id === record.id)?.minecraftVersions, record.minecraftVersions);
    } finally {
      await origin.close();
    }
  },
);
release.run();
