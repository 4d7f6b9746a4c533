import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { strToU8, zipSync, type Zippable } from 'fflate';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FormData, fetch } from 'undici';
import type { PluginVersion } from '../server/versions/schema.ts';
import {
  ROOT,
  makeWorkspace,
  runBuildCommand,
  runDepot,
  snapshotFiles,
  spawnOrigin,
  startTestOrigin,
  until,
  workspaceEnv,
  type CliResult,
  type OriginProcess,
  type Workspace,
  startPublishing,
  stopPublishing,
  addPaperVersion,
  pluginJar,
} from './helpers.ts';

// Issue 39, item 2: the Java a JAR needs, read from its class files, through the CLI as an operator
// types it and through the publishing API on a real origin.

const FIXTURES = join(ROOT, 'test/fixtures/class-files');
const compiled = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)));
const [JAVA8, JAVA17, JAVA21, JAVA25, PREVIEW] = [
  compiled('java8.class'),
  compiled('java17.class'),
  compiled('java21.class'),
  compiled('java25.class'),
  compiled('java25-preview.class'),
];

/** A plugin JAR for PaperMC (`label` makes its bytes unique) with these class entries. */
function classJar(label: string, classes: Zippable): Uint8Array {
  return zipSync({
    'META-INF/MANIFEST.MF': strToU8('Manifest-Version: 1.0\r\n\r\n'),
    'plugin.yml': strToU8(`name: Classy\nversion: 1.0.0\nmain: dev.example.Main\n# ${label}\n`),
    ...classes,
  });
}

/** A class header of a class-file version javac 25 cannot write (70: Java 26). */
function header(major: number): Uint8Array {
  const bytes = new Uint8Array(32);
  new DataView(bytes.buffer).setUint32(0, 0xcafebabe);
  new DataView(bytes.buffer).setUint16(6, major);
  return bytes;
}

const ctx = {} as { workspace: Workspace; origin: OriginProcess; token: string };

/** `npm run --silent depot -- <args>`, as an operator types it. */
function npmDepot(args: string[]): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      'npm',
      ['run', '--silent', 'depot', '--', ...args],
      { cwd: ROOT, env: workspaceEnv(ctx.workspace), timeout: 120_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function writeJar(name: string, bytes: Uint8Array): Promise<string> {
  const file = join(ctx.workspace.dir, name);
  await writeFile(file, bytes);
  return file;
}

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(`${ctx.origin.url}${path}`);
  assert.is(response.status, 200, path);
  return (await response.json()) as T;
}

/** What the origin answers for `id`: by id, in the list, and as latest for PaperMC on `java`. */
async function answers(id: string, java: string) {
  const { version: byId } = await getJson<{ version: PluginVersion }>(`/api/plugin-versions/${id}`);
  const list = await getJson<{ versions: PluginVersion[] }>('/api/plugin-versions');
  const latest = await getJson<{ version: PluginVersion }>(`/api/plugin-versions/latest/papermc/${java}`);
  return { byId, inList: list.versions.find((v) => v.id === id), latest: latest.version };
}

/** The origin serves `id` as updated at `updatedAt` (it follows dist/current). */
const served = (id: string, test: (version: PluginVersion) => boolean) =>
  until(async () => {
    const response = await fetch(`${ctx.origin.url}/api/plugin-versions/${id}`);
    return response.status === 200 && test(((await response.json()) as { version: PluginVersion }).version);
  }, `the origin serving ${id}`);

const cli = suite('depot release and edit: the Java from the class files (npm run depot)');
cli.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await spawnOrigin(ctx.workspace);
});
cli.after(() => stopPublishing(ctx));

const refusals: [string, () => Uint8Array, string[], (file: string) => string][] = [
  [
    'a claim below what a class needs',
    () => classJar('below', { 'dev/example/Main.class': JAVA21, 'dev/example/Old.class': JAVA8 }),
    ['--java', '17'],
    () =>
      'dev/example/Main.class is compiled for Java 21 (class file 65): --java 17 would offer it to Java 17 servers, which cannot load it; pass --java 21, or compile with --release 17',
  ],
  [
    'no --java, and no class outside the overlays',
    () => classJar('overlays', { 'META-INF/versions/21/dev/example/Main.class': JAVA21, 'module-info.class': JAVA25 }),
    [],
    (file) =>
      `${file} holds no class outside META-INF/versions/ (and module-info.class) to say which Java it needs: pass --java, the oldest Java it runs on (8, 11, 17, 21 or 25)`,
  ],
  [
    'a class for Java 26',
    () => classJar('java26', { 'dev/example/Main.class': header(70) }),
    ['--java', '25'],
    () =>
      'dev/example/Main.class is compiled for Java 26 (class file 70), which the depot does not list (8, 11, 17, 21 or 25): no server it serves that Java to exists here; compile with --release 25',
  ],
  [
    'a class compiled with --enable-preview',
    () => classJar('preview', { 'dev/example/Main.class': PREVIEW }),
    [],
    () =>
      'dev/example/Main.class is compiled with --enable-preview for Java 25 (class file 69, minor 65535): it loads only on a JVM started with --enable-preview, which no server passes; compile without --enable-preview',
  ],
  [
    'a .class entry that is not a class file',
    () => classJar('liar', { 'dev/example/Main.class': JAVA8, 'dev/example/Liar.class': strToU8('x'.repeat(300)) }),
    ['--java', '21'],
    () => 'dev/example/Liar.class is not a class file: it does not start with 0xCAFEBABE; rebuild the JAR',
  ],
];

cli('each refusal: one line naming the entry and what to do; data/ untouched', async () => {
  const before = await snapshotFiles(ctx.workspace.dataDir);
  for (const [name, bytes, options, line] of refusals) {
    const file = await writeJar(`Refused-${refusals.findIndex(([n]) => n === name)}.jar`, bytes());
    const result = await npmDepot(['release', file, '--version', '3.0.0', '--software', 'PaperMC', ...options]);
    assert.is(result.code, 1, `${name}: ${result.stdout}`);
    // The first command after a change of the CLI's sources says it bundled them, before anything else.
    const said = result.stderr.replace(/^\[depot\] bundled the CLI: .*\n/, '').trim();
    assert.is(said, `depot release: ${line(file)}`, name);
  }
  assert.equal(await snapshotFiles(ctx.workspace.dataDir), before);
});

cli('no --java: the smallest listed Java that loads the classes, overlays and module-info left out', async () => {
  const file = await writeJar(
    'Default-3.1.0.jar',
    classJar('default', {
      'dev/example/Main.class': JAVA17,
      'dev/example/Old.class': [JAVA8, { level: 0 }],
      'META-INF/versions/21/dev/example/Main.class': JAVA21,
      'module-info.class': JAVA25,
    }),
  );
  const result = await npmDepot(['release', file, '--version', '3.1.0', '--software', 'PaperMC']);
  assert.is(result.code, 0, result.stderr);
  const record = JSON.parse(result.stdout) as { id: string; javaVersion: string; classFileVersion: number };
  assert.is(record.javaVersion, '17');
  assert.is(record.classFileVersion, 61);
  const stored = JSON.parse(await readFile(join(ctx.workspace.dataDir, 'versions', `${record.id}.json`), 'utf8'));
  assert.is(stored.classFileVersion, 61);
  await served(record.id, () => true);
  const { byId, inList, latest } = await answers(record.id, '17');
  for (const version of [byId, inList!, latest]) {
    assert.is(version.id, record.id);
    assert.is(version.javaVersion, '17');
    assert.is(version.classFileVersion, 61);
  }
  const schema = await getJson<{ components: { schemas: Record<string, { properties: Record<string, unknown> }> } }>(
    '/api/openapi.json',
  );
  assert.ok(schema.components.schemas.PluginVersion!.properties.classFileVersion);
});

cli('a claim above the need stands; a JAR without classes has no classFileVersion', async () => {
  const above = await writeJar('Above-3.2.0.jar', classJar('above', { 'dev/example/Main.class': JAVA17 }));
  const result = await npmDepot(['release', above, '--version', '3.2.0', '--java', '21', '--software', 'PaperMC']);
  assert.is(result.code, 0, result.stderr);
  assert.equal(((r) => [r.javaVersion, r.classFileVersion])(JSON.parse(result.stdout) as PluginVersion), ['21', 61]);
  const none = await writeJar('None-3.3.0.jar', classJar('none', {}));
  const plain = await npmDepot(['release', none, '--version', '3.3.0', '--java', '11', '--software', 'PaperMC']);
  assert.is(plain.code, 0, plain.stderr);
  const record = JSON.parse(plain.stdout) as PluginVersion;
  await served(record.id, () => true);
  const { version } = await getJson<{ version: PluginVersion }>(`/api/plugin-versions/${record.id}`);
  assert.is(version.classFileVersion, undefined);
});

cli('a record in data/ below its bytes: served as it is, the build warns once; edit raises, never lowers', async () => {
  const file = await writeJar('Claimed-3.4.0.jar', classJar('claimed', { 'dev/example/Main.class': JAVA21 }));
  const released = await npmDepot(['release', file, '--version', '3.4.0', '--java', '21', '--software', 'PaperMC']);
  assert.is(released.code, 0, released.stderr);
  const { id } = JSON.parse(released.stdout) as { id: string };
  // As a record written before issue 39 would be: its claim, no classFileVersion.
  const path = join(ctx.workspace.dataDir, 'versions', `${id}.json`);
  const { classFileVersion: _read, ...old } = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  await writeFile(path, `${JSON.stringify({ ...old, javaVersion: '11' }, null, 2)}\n`);
  const build = await runBuildCommand(ctx.workspace);
  assert.is(build.code, 0, build.stderr);
  const warning = `[build] warning: ${id} (3.4.0) is listed for Java 11, but its classes are compiled for Java 21 (class file 65): Java 11 servers cannot load it; served as it is until depot edit ${id} --java 21`;
  // The build's progress lines go to stdout (npm run build).
  assert.is(build.stdout.split('\n').filter((line) => line === warning).length, 1, build.stdout);
  await served(id, (version) => version.javaVersion === '11');
  assert.is((await getJson<{ version: PluginVersion }>(`/api/plugin-versions/${id}`)).version.classFileVersion, 65);

  const refused: [string[], string][] = [
    [
      ['--java', '17'],
      `depot edit: dev/example/Main.class is compiled for Java 21 (class file 65): --java 17 would offer it to Java 17 servers, which cannot load it; pass --java 21, or release a JAR compiled with --release 17 instead`,
    ],
    [
      ['--java', '8'],
      `depot edit: --java: cannot change: the JAR fixes it; release a new version (and withdraw this one) instead: an edit only raises a version's Java, and ${id} is listed for Java 11`,
    ],
  ];
  const before = await snapshotFiles(ctx.workspace.dataDir);
  for (const [options, line] of refused) {
    const result = await npmDepot(['edit', id, ...options]);
    assert.is(result.code, 1, result.stdout);
    assert.is(result.stderr.trim(), line);
  }
  assert.equal(await snapshotFiles(ctx.workspace.dataDir), before);

  const raised = await npmDepot(['edit', id, '--java', '21']);
  assert.is(raised.code, 0, raised.stderr);
  assert.not.match(raised.stderr, /\[build\] warning: /);
  const record = JSON.parse(await readFile(path, 'utf8')) as { javaVersion: string; classFileVersion: number };
  assert.equal([record.javaVersion, record.classFileVersion], ['21', 65]);
  await served(id, (version) => version.javaVersion === '21');
  const lower = await npmDepot(['edit', id, '--java', '17']);
  assert.is(lower.code, 1);
  assert.match(lower.stderr, /an edit only raises a version's Java, and plugin-\S+ is listed for Java 21$/m);
});

cli.run();

// Over HTTP: the same checks, answered with the status and field the API names.

function form(bytes: Uint8Array, fileName: string, metadata: unknown) {
  const body = new FormData();
  body.set('file', new Blob([Buffer.from(bytes)]), fileName);
  body.set('metadata', JSON.stringify(metadata));
  return body;
}

async function send(method: 'POST' | 'PATCH', path: string, body: FormData | string) {
  const headers: Record<string, string> = { authorization: `Bearer ${ctx.token}` };
  if (typeof body === 'string') headers['content-type'] = 'application/json';
  const response = await fetch(`${ctx.origin.url}${path}`, { method, body, headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const http = suite('POST and PATCH /api/plugin-versions: the Java from the class files');
http.before(async () => {
  Object.assign(ctx, await startPublishing());
});
http.after(() => stopPublishing(ctx));

const httpRefusals: [string, Uint8Array, Record<string, unknown>, number, Record<string, unknown>][] = [
  [
    'a javaVersion below what a class needs: 400 naming javaVersion',
    classJar('http-below', { 'dev/example/Main.class': JAVA21 }),
    { javaVersion: 17 },
    400,
    {
      error:
        'dev/example/Main.class is compiled for Java 21 (class file 65): --java 17 would offer it to Java 17 servers, which cannot load it; pass --java 21, or compile with --release 17',
      field: 'javaVersion',
    },
  ],
  [
    'no javaVersion and no class: 400, it is required',
    classJar('http-none', {}),
    {},
    400,
    { error: 'metadata.javaVersion: is required, e.g. "21"', field: 'javaVersion' },
  ],
  [
    'a preview class: 422',
    classJar('http-preview', { 'dev/example/Main.class': PREVIEW }),
    {},
    422,
    {
      error:
        'dev/example/Main.class is compiled with --enable-preview for Java 25 (class file 69, minor 65535): it loads only on a JVM started with --enable-preview, which no server passes; compile without --enable-preview',
    },
  ],
];

http('refusals: the status, the one line, the field', async () => {
  const before = await snapshotFiles(ctx.workspace.dataDir);
  for (const [name, bytes, metadata, status, body] of httpRefusals) {
    const answer = await send(
      'POST',
      '/api/plugin-versions',
      form(bytes, 'Classy.jar', { pluginVersion: '4.0.0', serverSoftware: ['PaperMC'], ...metadata }),
    );
    assert.is(answer.status, status, `${name}: ${JSON.stringify(answer.body)}`);
    assert.equal(answer.body, body, name);
  }
  assert.equal(await snapshotFiles(ctx.workspace.dataDir), before);
});

http('no javaVersion: the classes decide; PATCH raises it and refuses to lower it', async () => {
  const bytes = classJar('http-default', { 'dev/example/Main.class': JAVA17, 'dev/example/Old.class': JAVA8 });
  const created = await send(
    'POST',
    '/api/plugin-versions',
    form(bytes, 'Classy-4.1.0.jar', { pluginVersion: '4.1.0', serverSoftware: ['PaperMC'] }),
  );
  assert.is(created.status, 201, JSON.stringify(created.body));
  const version = created.body.version as PluginVersion;
  assert.equal([version.javaVersion, version.classFileVersion], ['17', 61]);
  const { byId, inList, latest } = await answers(version.id, '17');
  for (const answer of [byId, inList!, latest]) assert.equal([answer.javaVersion, answer.classFileVersion], ['17', 61]);

  const raised = await send('PATCH', `/api/plugin-versions/${version.id}`, JSON.stringify({ javaVersion: 21 }));
  assert.is(raised.status, 200, JSON.stringify(raised.body));
  assert.equal(((v) => [v.javaVersion, v.classFileVersion])(raised.body.version as PluginVersion), ['21', 61]);
  const lowered = await send('PATCH', `/api/plugin-versions/${version.id}`, JSON.stringify({ javaVersion: '17' }));
  assert.is(lowered.status, 400);
  assert.equal(lowered.body, {
    error: `--java: cannot change: the JAR fixes it; release a new version (and withdraw this one) instead: an edit only raises a version's Java, and ${version.id} is listed for Java 21`,
    field: 'javaVersion',
  });
});

http.run();

const site = suite('the version page: compiled for Java 21');
const page = {} as { workspace: Workspace };
site.before(async () => {
  page.workspace = await makeWorkspace({ site: true });
});
site.after(() => page.workspace?.remove());

site('a release of Java 21 classes says so on its page; a JAR without classes says nothing of it', async () => {
  const file = join(page.workspace.dir, 'Paged-5.0.0.jar');
  await writeFile(file, classJar('paged', { 'dev/example/Main.class': JAVA21 }));
  // The demo's JARs all hold classes: one without, as an older release may have left it in data/.
  await addPaperVersion(page.workspace.dataDir, '4.9.0', pluginJar('4.9.0', ['PaperMC']));
  const released = await runDepot(['release', file, '--version', '5.0.0', '--software', 'PaperMC'], page.workspace);
  assert.is(released.code, 0, released.stderr);
  const { id } = JSON.parse(released.stdout) as { id: string };
  const origin = await startTestOrigin(page.workspace);
  try {
    const html = await (await fetch(`${origin.url}/version/${id}`)).text();
    assert.match(html, /<span class="hint compiled-for"[^>]*>\(compiled for Java 21, class file 65\)<\/span>/);
    const list = (await (await fetch(`${origin.url}/api/plugin-versions`)).json()) as { versions: PluginVersion[] };
    const demo = list.versions.find((v) => v.pluginVersion === '4.9.0')!;
    assert.is(demo.classFileVersion, undefined);
    const plain = await (await fetch(`${origin.url}/version/${demo.id}`)).text();
    assert.not.match(plain, /compiled for Java/);
  } finally {
    await origin.close();
  }
});

site.run();
