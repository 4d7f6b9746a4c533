import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type RequestListener } from 'node:http';
import { join } from 'node:path';
import { H3 } from 'h3';
import { toNodeHandler } from 'srvx/node';
import { strToU8, zipSync } from 'fflate';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RefusedError } from '../build/changes/refused.ts';
import { releaseJar } from '../build/changes/release.ts';
import { ENDPOINTS } from '../server/endpoints.ts';
import { createErrorAnswer } from '../server/http/errors.ts';
import { parsePublishMetadata } from '../server/publish/metadata.ts';
import { refusalError } from '../server/publish/refusal.ts';
import { receiveUpload } from '../server/publish/upload.ts';
import { SHARED_BUILD_CACHE, makeWorkspace, pluginJar, runDepot, snapshotFiles, type Workspace } from './helpers.ts';

/**
 * What POST /api/plugin-versions will run once its route and its token check are wired: the upload,
 * its metadata, and the CLI's release function, its refusals answered as HTTP.
 */
async function startPublishServer(workspace: Workspace) {
  const uploads = join(workspace.dir, 'uploads');
  await mkdir(uploads, { recursive: true });
  const app = new H3({ onError: createErrorAnswer(ENDPOINTS), silent: true });
  app.post('/publish', async (event) => {
    const upload = await receiveUpload(event, { maxBytes: 64 * 1024 * 1024, dir: uploads });
    try {
      const metadata = parsePublishMetadata(upload.metadata);
      const dirs = { ...workspace, buildCacheDir: SHARED_BUILD_CACHE, site: false };
      const input = { ...metadata, file: upload.path, fileName: upload.fileName, by: 'bob' };
      return await releaseJar(input, dirs, new Date());
    } catch (error) {
      if (error instanceof RefusedError && error.refusal) throw refusalError(error.message, error.refusal);
      throw error;
    } finally {
      await upload.remove();
    }
  });
  const server = createServer(toNodeHandler((request) => app.fetch(request)) as RequestListener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/publish`,
    uploads,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections()),
  };
}

const CHANGELOG = '## 2.0.0\n\n- Same path for the CLI and the API.\n';

/**
 * Posts the two parts as undici's FormData encodes them, over node:http: the suite's fetch checks
 * every answer against the OpenAPI document, which will document the route once it is wired.
 */
async function publish(url: string, jar: Uint8Array, fileName: string, metadata: unknown) {
  const form = new FormData();
  form.append('metadata', JSON.stringify(metadata));
  form.append('file', new Blob([Buffer.from(jar)]), fileName);
  const encoded = new Request(url, { method: 'POST', body: form });
  const body = Buffer.from(await encoded.arrayBuffer());
  return new Promise<{ status: number; json: Record<string, unknown> }>((resolve, reject) => {
    const request = httpRequest(url, {
      method: 'POST',
      headers: { 'content-type': encoded.headers.get('content-type')! },
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString()) }),
      );
    });
    request.on('error', reject);
    request.setTimeout(120_000, () => request.destroy(new Error(`${url}: no answer in 120 s`)));
    request.end(body);
  });
}

const ctx = {} as { cli: Workspace; api: Workspace; server: Awaited<ReturnType<typeof startPublishServer>> };

const same = suite('depot release and the publishing path');
same.before(async () => {
  [ctx.cli, ctx.api] = await Promise.all([makeWorkspace({ build: false }), makeWorkspace({ build: false })]);
  ctx.server = await startPublishServer(ctx.api);
});
same.after(async () => {
  await ctx.server.close();
  await Promise.all([ctx.cli.remove(), ctx.api.remove()]);
});

/** A version's files in data/ without what differs between two releases of it: its id and times. */
async function releasedFiles(workspace: Workspace, id: string) {
  const versions = join(workspace.dataDir, 'versions');
  const { id: _id, createdAt, updatedAt, ...record } = JSON.parse(await readFile(join(versions, `${id}.json`), 'utf8'));
  assert.is(createdAt, updatedAt);
  const jar = await readFile(join(workspace.dataDir, 'jars', `${id}.jar`));
  return { record, changelog: await readFile(join(versions, `${id}.md`), 'utf8'), jar: jar.toString('base64') };
}

same('the same JAR and options give the same data/ record, changelog and JAR by either path', async () => {
  const jar = pluginJar('2.0.0', ['PaperMC', 'Folia']);
  const fileName = 'Same Plügin-2.0.0.jar';
  const file = join(ctx.cli.dir, fileName);
  const notes = join(ctx.cli.dir, 'notes.md');
  await writeFile(file, jar);
  await writeFile(notes, CHANGELOG);
  const cli = await runDepot(
    [
      'release',
      file,
      ...['--version', '2.0.0', '--java', '17', '--software', 'PaperMC,Folia', '--minecraft', '1.20.6-1.21.4'],
      ...['--proxy', '3.4', '--channel', 'beta', '--changelog', notes, '--by', 'bob'],
    ],
    ctx.cli,
  );
  assert.is(cli.code, 0, cli.stderr);
  const response = await publish(ctx.server.url, jar, fileName, {
    pluginVersion: '2.0.0',
    javaVersion: 17,
    serverSoftware: ['papermc', 'Folia'],
    minecraftVersions: '1.20.6-1.21.4',
    proxyVersion: '3.4',
    channel: 'beta',
    changelog: CHANGELOG,
  });
  assert.is(response.status, 200, JSON.stringify(response.json));
  const fromCli = JSON.parse(cli.stdout) as { id: string };
  const fromApi = response.json as { id: string };
  const [a, b] = await Promise.all([releasedFiles(ctx.cli, fromCli.id), releasedFiles(ctx.api, fromApi.id)]);
  assert.equal(b, a);
  assert.is(a.record.fileName, fileName);
  assert.equal(a.record.minecraftVersions, [{ from: '1.20.6', to: '1.21.4' }]);
  assert.equal(await readdir(ctx.server.uploads), [], 'the upload removed');
});

/** Each refusal of the release, answered with its status and what to fix; data/ left byte for byte. */
const refusals: [string, () => [Uint8Array, string, unknown], number, RegExp, Record<string, unknown>][] = [
  [
    'the same bytes again: 409 with the existing id',
    () => [
      pluginJar('2.0.0', ['PaperMC', 'Folia']),
      'Again.jar',
      { pluginVersion: '9.0.0', javaVersion: '21', serverSoftware: ['Quilt'] },
    ],
    409,
    /^Again\.jar is already released as plugin-\d+-\w+ \(same sha256\)$/,
    { existingId: /^plugin-/ },
  ],
  [
    'the same version, Java and softwares: 409 with the existing id',
    () => [
      pluginJar('rebuilt', ['Folia']),
      'Rebuilt.jar',
      { pluginVersion: '2.0.0', javaVersion: '17', serverSoftware: ['Folia', 'PaperMC'] },
    ],
    409,
    /^version 2\.0\.0 for Java 17 and Folia, PaperMC is already released as plugin-/,
    { existingId: /^plugin-/ },
  ],
  [
    'a file that is not a zip: 422',
    () => [strToU8('not a zip'), 'Fake.jar', { pluginVersion: '3.0.0', javaVersion: '21', serverSoftware: ['Quilt'] }],
    422,
    /^Fake\.jar is not a zip\/JAR archive/,
    {},
  ],
  [
    'a zip without a plugin descriptor: 422',
    () => [
      zipSync({ 'hello.txt': strToU8('hi') }),
      'Data.jar',
      { pluginVersion: '3.0.0', javaVersion: '21', serverSoftware: ['Quilt'] },
    ],
    422,
    /without META-INF\/MANIFEST\.MF or a plugin descriptor/,
    {},
  ],
  [
    'an unknown software: 400 naming the field',
    () => [pluginJar('3.0.0'), 'A.jar', { pluginVersion: '3.0.0', javaVersion: '21', serverSoftware: ['Forge'] }],
    400,
    /^metadata\.serverSoftware\[0\]: Unknown server software "Forge"; expected one of PaperMC/,
    { field: 'serverSoftware' },
  ],
  [
    'a version that is not semver: 400 naming the field',
    () => [pluginJar('3.0.0'), 'A.jar', { pluginVersion: 'v3', javaVersion: '21', serverSoftware: ['Quilt'] }],
    400,
    /^metadata\.pluginVersion: must be a semantic version/,
    { field: 'pluginVersion' },
  ],
  [
    'a missing javaVersion: 400 naming the field',
    () => [pluginJar('3.0.0'), 'A.jar', { pluginVersion: '3.0.0', serverSoftware: ['Quilt'] }],
    400,
    /^metadata\.javaVersion: is required, e\.g\. "21"$/,
    { field: 'javaVersion' },
  ],
  [
    'a misspelt field: 400 naming it and the fields there are',
    () => [
      pluginJar('3.0.0'),
      'A.jar',
      { pluginVersion: '3.0.0', javaVersion: '21', serverSoftware: ['Quilt'], minecraftVersion: '1.21' },
    ],
    400,
    /^metadata: unknown field "minecraftVersion"; the fields are pluginVersion, javaVersion, serverSoftware, minecraftVersions/,
    { field: 'metadata' },
  ],
  [
    'a backwards Minecraft range: 400 naming the field',
    () => [
      pluginJar('3.0.0'),
      'A.jar',
      { pluginVersion: '3.0.0', javaVersion: '21', serverSoftware: ['Quilt'], minecraftVersions: '1.21.4-1.20.6' },
    ],
    400,
    /^metadata\.minecraftVersions: "1\.21\.4-1\.20\.6" runs backwards/,
    { field: 'minecraftVersions' },
  ],
  [
    'a changelog with a bidi override: 400 naming the field, as --changelog',
    () => [
      pluginJar('3.0.0'),
      'A.jar',
      { pluginVersion: '3.0.0', javaVersion: '21', serverSoftware: ['Quilt'], changelog: 'Fixed \u202Eevil' },
    ],
    400,
    /^changelog: contains a format character \(U\+202E\); control characters and bidi overrides are not allowed$/,
    { field: 'changelog' },
  ],
  [
    'a changelog over 64 KiB: 400 naming the field, as --changelog',
    () => [
      pluginJar('3.0.0'),
      'A.jar',
      { pluginVersion: '3.0.0', javaVersion: '21', serverSoftware: ['Quilt'], changelog: 'x'.repeat(70_000) },
    ],
    400,
    /^changelog: 70000 bytes; a changelog holds at most 65536 bytes$/,
    { field: 'changelog' },
  ],
  [
    'a changelog that takes too long to render: 400, as --changelog',
    () => [
      pluginJar('3.0.0'),
      'A.jar',
      { pluginVersion: '3.0.0', javaVersion: '21', serverSoftware: ['Quilt'], changelog: '**_a'.repeat(16_384) },
    ],
    400,
    /^changelog: the paragraph from line 1 has more than 500 runs of \* or _/,
    { field: 'changelog' },
  ],
  [
    'a file name with a right-to-left override: 400 naming fileName, as the CLI',
    () => [
      pluginJar('3.0.0'),
      'x\u202Egnp.jar',
      { pluginVersion: '3.0.0', javaVersion: '21', serverSoftware: ['Quilt'] },
    ],
    400,
    /^the JAR's file name "x\\u202egnp\.jar" contains a format character \(U\+202E\); rename the file$/,
    { field: 'fileName' },
  ],
  [
    'a file not named .jar: 400 naming fileName',
    () => [pluginJar('3.0.0'), 'plugin.zip', { pluginVersion: '3.0.0', javaVersion: '21', serverSoftware: ['Quilt'] }],
    400,
    /^cannot release plugin\.zip: fileName: must be a file name ending in \.jar/,
    { field: 'fileName' },
  ],
];
for (const [name, make, status, message, fields] of refusals) {
  same(`refuses ${name}; data/ untouched`, async () => {
    const before = await snapshotFiles(ctx.api.dataDir);
    const response = await publish(ctx.server.url, ...make());
    assert.is(response.status, status);
    const { error, ...rest } = response.json as { error: string } & Record<string, string>;
    assert.match(error, message);
    assert.equal(Object.keys(rest), Object.keys(fields));
    for (const [key, value] of Object.entries(fields))
      if (value instanceof RegExp) assert.match(rest[key]!, value);
      else assert.is(rest[key], value);
    assert.equal(await snapshotFiles(ctx.api.dataDir), before, 'data/ untouched');
    assert.equal(await readdir(ctx.server.uploads), [], 'the upload removed');
  });
}
same.run();
