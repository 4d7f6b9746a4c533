import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import { JAVA_VERSIONS } from '../server/versions/java.ts';
import {
  ROOT,
  pluginJar,
  rawRequest,
  runDepot,
  spawnOrigin,
  until,
  type CliResult,
  type OriginProcess,
  type RawAnswer,
  type Workspace,
  workspaceEnv,
  linkNodeModules,
} from './helpers.ts';

// An origin of this code started on a tree built by older code of this repository (origins
// restarted on an upgrade before the build that follows it) answers every SPEC route, and
// `npm start` rebuilds the tree. Each older tree is built once, by its own commit's `npm run build`,
// in a checkout made from git history with this checkout's node_modules (those commits' package.json
// name a subset of today's packages).

const OLDER = [
  { name: 'the main this issue started from', commit: '0bf117a', predates: false, refusedNames: false },
  // Its catalog.json has no sha512 (commit f7893d3 added it): today's schema refuses its versions.
  // Its data/ also gets names that code accepted and the character rule (issue 27) refuses now.
  { name: 'before sha512 entered the catalog', commit: 'f7893d3^', predates: true, refusedNames: true },
] as const;

/** U+202E shows `Api\u202Egnp.jar` as `Apiraj.png`; older code took it, today's refuses it. */
const REFUSED_FILE_NAME = 'Api\u202Egnp.jar';
const REFUSED_NICKNAME = 'Alice\u200B the Maintainer';

/** What an operator does when the build refuses the names addRefusedNames wrote. */
async function followCharacterRule(dataDir: string, id: string) {
  const recordFile = join(dataDir, 'versions', `${id}.json`);
  const record = JSON.parse(await readFile(recordFile, 'utf8')) as { fileName: string };
  await writeFile(recordFile, JSON.stringify({ ...record, fileName: 'Api.jar' }));
  const usersFile = join(dataDir, 'users.json');
  const users = JSON.parse(await readFile(usersFile, 'utf8')) as { nickname?: string | null }[];
  for (const user of users) if (user.nickname === REFUSED_NICKNAME) user.nickname = 'Alice the Maintainer';
  await writeFile(usersFile, JSON.stringify(users));
}

/** A version whose file name, and a user whose nickname, the character rule refuses, as older code let data/ hold them. */
async function addRefusedNames(dataDir: string): Promise<string> {
  const jar = pluginJar('9.9.9');
  const sha256 = sha('sha256', jar);
  const id = `plugin-1800000000000-${sha256.slice(0, 10)}`;
  const at = '2027-01-15T10:00:00.000Z';
  const record = {
    ...{ id, serverSoftware: ['PaperMC'], pluginVersion: '9.9.9', javaVersion: '21', proxyVersion: null },
    ...{ fileName: REFUSED_FILE_NAME, fileSize: jar.length, sha256, createdAt: at, updatedAt: at, createdBy: 'alice' },
  };
  await writeFile(join(dataDir, 'jars', `${id}.jar`), jar);
  await writeFile(join(dataDir, 'versions', `${id}.json`), JSON.stringify(record));
  const usersFile = join(dataDir, 'users.json');
  const users = JSON.parse(await readFile(usersFile, 'utf8')) as { username: string; nickname?: string | null }[];
  for (const user of users) if (user.username === 'alice') user.nickname = REFUSED_NICKNAME;
  await writeFile(usersFile, JSON.stringify(users));
  return id;
}

/** SPEC 8's limit would cut the hundreds of requests below short. */
const ORIGIN_ENV = { RATE_LIMIT: '0', LOG_REQUESTS: 'off' };

const sha = (algorithm: 'sha256' | 'sha512', bytes: Uint8Array) => createHash(algorithm).update(bytes).digest('hex');
const base64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

/** Fails with what to do when the history this test builds from is not here (a shallow clone). */
function requireHistory(commit: string) {
  const git = (...args: string[]) => execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' }).trim();
  if (git('rev-parse', '--is-shallow-repository') === 'true')
    throw new Error(
      `test/older-trees.test.ts builds trees with older commits (${commit}), but this clone is shallow: fetch full history first (git fetch --unshallow)`,
    );
  try {
    git('cat-file', '-e', `${commit}^{commit}`);
  } catch {
    throw new Error(`commit ${commit} is not in this clone: fetch full history first (git fetch --unshallow)`);
  }
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((done) => {
    execFile(command, args, { cwd, env, timeout: 300_000 }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A checkout of `commit` (git archive) with this checkout's node_modules, and its tree built by its own `npm run build`. */
async function buildOlderTree(
  commit: string,
  beforeBuild: (workspace: Workspace) => Promise<unknown>,
): Promise<Workspace> {
  requireHistory(commit);
  const dir = await mkdtemp(join(tmpdir(), 'depot-older-tree-'));
  const extracted = await run(
    'bash',
    ['-c', 'set -o pipefail; git -C "$1" archive "$2" | tar -x -C "$3"', 'bash', ROOT, commit, dir],
    ROOT,
    process.env,
  );
  assert.is(extracted.code, 0, extracted.stderr);
  await linkNodeModules(dir);
  const workspace = {
    dir,
    dataDir: join(dir, 'data'),
    distDir: join(dir, 'dist'),
    storageDir: join(dir, 'storage'),
    site: false,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
  await beforeBuild(workspace);
  // The site is left out (SITE=off): SPEC's routes are the API's, and Astro would double the time.
  const folders = { DATA_DIR: workspace.dataDir, DIST_DIR: workspace.distDir, BUILD_CACHE_DIR: join(dir, 'cache') };
  const built = await run('npm', ['run', 'build'], dir, { ...process.env, ...folders, SITE: 'off' });
  assert.is(built.code, 0, `${commit}'s npm run build: ${built.stderr}`);
  return workspace;
}

type OlderVersion = { id: string; sha256: string; jar: Buffer };

async function olderVersions(dataDir: string): Promise<OlderVersion[]> {
  const files = (await readdir(join(dataDir, 'versions'))).filter((name) => name.endsWith('.json'));
  return Promise.all(
    files.map(async (name) => {
      const record = JSON.parse(await readFile(join(dataDir, 'versions', name), 'utf8')) as { id: string };
      const jar = await readFile(join(dataDir, 'jars', `${record.id}.jar`));
      return { id: record.id, sha256: sha('sha256', jar), jar };
    }),
  );
}

/** Lines the origin logged that say its tree predates its code. */
const predatesLines = (origin: OriginProcess) => origin.stdout.filter((line) => line.includes('predates this code'));

for (const older of OLDER) {
  const test = suite(`an origin of this code on a tree built by ${older.commit} (${older.name})`);
  const ctx = {} as {
    workspace: Workspace;
    origin: OriginProcess;
    versions: OlderVersion[];
    answers: string[];
    refused: string | undefined;
    server: string;
  };

  /** Every answer is kept (path and status) so the last test can check none was a 5xx. */
  const get = async (path: string): Promise<RawAnswer> => {
    const answer = await rawRequest(ctx.origin.url + path);
    ctx.answers.push(`${answer.status} ${path}`);
    assert.ok(answer.status < 500, `${path}: ${answer.status} ${answer.body.toString().slice(0, 300)}`);
    return answer;
  };
  const json = async (path: string) => JSON.parse((await get(path)).body.toString()) as Record<string, unknown>;

  test.before(async () => {
    ctx.workspace = await buildOlderTree(older.commit, async (workspace) => {
      // A server for its chart (SPEC 4.9), added while today's CLI can read data/: it refuses the names below.
      const added = await runDepot(['server', 'add', '--owner', 'alice'], workspace);
      assert.is(added.code, 0, added.stderr);
      ctx.server = (JSON.parse(added.stdout) as { id: string }).id;
      if (older.refusedNames) ctx.refused = await addRefusedNames(workspace.dataDir);
    });
    ctx.versions = await olderVersions(ctx.workspace.dataDir);
    ctx.answers = [];
    ctx.origin = await spawnOrigin(ctx.workspace, ORIGIN_ENV);
  });
  test.after(async () => {
    if (ctx.origin?.child.exitCode === null) ctx.origin.child.kill('SIGTERM');
    await ctx.origin?.exited;
    await ctx.workspace?.remove();
  });

  test('4.3: every version downloads by id, its bytes and digests those of its JAR, precomputed and live', async () => {
    assert.ok(ctx.versions.length >= 10, `${ctx.versions.length} versions`);
    for (const version of ctx.versions) {
      for (const path of [
        `/api/plugin-versions/download/${version.id}`,
        `/api/plugin-versions/download/${version.id}?live`,
      ]) {
        const answer = await get(path);
        assert.is(answer.status, 200, path);
        assert.ok(answer.body.equals(version.jar), `${path}: the JAR's bytes`);
      }
    }
    // The live answer names the JAR's digests, the sha512 read from the JAR the tree holds.
    const [version] = ctx.versions;
    const live = await get(`/api/plugin-versions/download/${version!.id}?live`);
    assert.is(
      live.headers['repr-digest'],
      `sha-256=:${base64(version!.sha256)}:, sha-512=:${base64(sha('sha512', version!.jar))}:`,
    );
  });

  test('4.4: the list names every version, precomputed and live', async () => {
    const ids = ctx.versions.map((version) => version.id).sort();
    for (const path of ['/api/plugin-versions', '/api/plugin-versions?live']) {
      const { versions: list } = (await json(path)) as { versions: { id: string; sha256: string }[] };
      assert.equal(list.map((version) => version.id).sort(), ids, path);
      for (const item of list) assert.is(item.sha256, ctx.versions.find((v) => v.id === item.id)!.sha256, path);
    }
    const live = (await json('/api/plugin-versions?live')) as { versions: { id: string; sha512: string }[] };
    for (const item of live.versions)
      assert.is(item.sha512, sha('sha512', ctx.versions.find((v) => v.id === item.id)!.jar), `${item.id}: sha512`);
  });

  test('4.1, 4.2, 4.5, 4.6: latest by software (and Java version), precomputed and live agree, downloads are that JAR', async () => {
    let found = 0;
    for (const software of SERVER_SOFTWARE) {
      for (const java of [undefined, ...JAVA_VERSIONS]) {
        const tail = java ? `${software.toLowerCase()}/${java}` : software.toLowerCase();
        const liveTail = java ? `${software.toUpperCase()}/${java}` : software.toUpperCase();
        const latest = await get(`/api/plugin-versions/latest/${tail}`);
        const liveLatest = await get(`/api/plugin-versions/latest/${liveTail}`);
        assert.is(liveLatest.status, latest.status, liveTail);
        const download = await get(`/api/plugin-versions/download/latest/${tail}`);
        const liveDownload = await get(`/api/plugin-versions/download/latest/${liveTail}`);
        if (latest.status === 404) {
          for (const answer of [download, liveDownload]) assert.is(answer.status, 404, tail);
          assert.match(JSON.parse(liveLatest.body.toString()).error, /./);
          continue;
        }
        found++;
        assert.is(latest.status, 200, tail);
        const precomputed = (JSON.parse(latest.body.toString()) as { version: { id: string } }).version;
        const live = (JSON.parse(liveLatest.body.toString()) as { version: { id: string; sha512: string } }).version;
        assert.is(live.id, precomputed.id, tail);
        const jar = ctx.versions.find((version) => version.id === live.id)!.jar;
        assert.is(live.sha512, sha('sha512', jar), `${liveTail}: sha512`);
        for (const answer of [download, liveDownload]) {
          assert.is(answer.status, 200, tail);
          assert.ok(answer.body.equals(jar), `${tail}: the latest JAR`);
        }
      }
    }
    assert.ok(found > 10, `${found} latest versions found`);
  });

  test('4.7, 4.8: brands listed, each brand an image, other sizes and formats rendered live', async () => {
    const { brands } = (await json('/api/image/brand')) as { brands: Record<string, string[]> };
    assert.equal(Object.keys(brands).sort(), ['canvasmc', 'folia', 'leafmc', 'papermc', 'purpurmc', 'velocity']);
    for (const brand of Object.keys(brands)) {
      const image = await get(`/api/image/brand/${brand}`);
      assert.is(image.status, 200, brand);
      assert.match(String(image.headers['content-type']), /^image\//, brand);
      const resized = await get(`/api/image/brand/${brand.toUpperCase()}?size=77&format=png`);
      assert.is(resized.status, 200, brand);
      assert.is(resized.headers['content-type'], 'image/png', brand);
    }
  });

  test("4.9, 4.10: a server's player chart, the example chart", async () => {
    const chart = await get(`/api/servers/${ctx.server}/chart/players?days=7`);
    assert.is(chart.status, 200);
    assert.match(chart.body.toString(), /^<svg/);
    for (const path of ['/api/charts/example', '/api/charts/example?days=30&theme=dark']) {
      const example = await get(path);
      assert.is(example.status, 200, path);
      assert.match(example.body.toString(), /^<svg/, path);
    }
  });

  if (older.refusedNames)
    test("names today's code refuses: the version downloads under its name without the refused character, the nickname is left out", async () => {
      const path = `/api/plugin-versions/download/${ctx.refused}?live`;
      const download = await get(path);
      assert.is(download.status, 200);
      assert.match(String(download.headers['content-disposition']), /Apignp\.jar/);
      assert.not.match(String(download.headers['content-disposition']), /%E2%80%AE|\u202E/i);
      const latest = (await json('/api/plugin-versions/latest/PaperMC/21')) as { version: { id: string } };
      assert.is(latest.version.id, ctx.refused);
      const { versions } = (await json('/api/plugin-versions?live')) as {
        versions: { id: string; fileName: string; createdByUser: { username: string; nickname?: string | null } }[];
      };
      const version = versions.find((item) => item.id === ctx.refused)!;
      assert.is(version.fileName, 'Apignp.jar');
      assert.is(version.createdByUser.username, 'alice');
      assert.is(version.createdByUser.nickname ?? null, null);
      const said = predatesLines(ctx.origin).join('\n');
      assert.match(said, new RegExp(`${ctx.refused}\\.fileName`));
      assert.match(said, /user alice\.nickname/);
    });

  test('SPEC 7: errors are JSON 4xx on an older tree too', async () => {
    const cases: [string, number][] = [
      ['/api/plugin-versions/latest/forge', 404],
      ['/api/plugin-versions/latest/papermc/9', 404],
      ['/api/plugin-versions/download/plugin-1-none', 404],
      ['/api/image/brand/minecraft', 404],
      ['/api/image/brand/papermc?size=0', 400],
      ['/api/servers/00000000-0000-4000-8000-000000000000/chart/players', 404],
    ];
    for (const [path, status] of cases) {
      const answer = await get(path);
      assert.is(answer.status, status, path);
      assert.match(String(answer.headers['content-type']), /^application\/json/, path);
    }
  });

  test(`no 5xx; the origin ${older.predates ? 'said once' : 'had no need to say'} that the tree predates its code`, async () => {
    assert.ok(ctx.answers.length > 250, `${ctx.answers.length} answers`);
    assert.equal(
      ctx.answers.filter((answer) => answer.startsWith('5')),
      [],
    );
    assert.is(predatesLines(ctx.origin).length, older.predates ? 1 : 0, ctx.origin.stdout.join('\n'));
    assert.not.ok(
      ctx.origin.stderr.some((line) => /DataError|Internal server error/.test(line)),
      ctx.origin.stderr.join('\n'),
    );
  });

  test('npm start rebuilds the older tree before serving, and the new tree needs nothing made good', async () => {
    ctx.origin.child.kill('SIGTERM');
    await ctx.origin.exited;
    const before = await readlink(join(ctx.workspace.distDir, 'current'));
    if (older.refusedNames) {
      // The build refuses data/ that breaks the character rule, naming the file (issue 27): the
      // operator renames the file and the nickname; the tree served until then is the older one.
      const refused = await run('npm', ['run', 'build', '--', '--if-changed'], ROOT, workspaceEnv(ctx.workspace));
      assert.is(refused.code, 1);
      assert.match(
        refused.stderr,
        new RegExp(`${ctx.refused}\\.json: fileName: contains a format character \\(U\\+202E\\)`),
      );
      await followCharacterRule(ctx.workspace.dataDir, ctx.refused!);
    }
    // The settings the older tree was built with (SPEC 8's limit among them): only the code differs.
    const started = await spawnOrigin(ctx.workspace, { LOG_REQUESTS: 'off' }, { npmStart: true });
    try {
      const group = started.child.pid!;
      assert.ok(
        started.stdout.some((line) => /^\[build\] swap: /.test(line)),
        started.stdout.join('\n'),
      );
      assert.not.ok(started.stdout.some((line) => /unchanged since the current tree/.test(line)));
      assert.ok(started.stdout.some((line) => line.startsWith('[build] the current tree was built by other code ')));
      const after = await readlink(join(ctx.workspace.distDir, 'current'));
      assert.is.not(after, before);
      const catalog = JSON.parse(await readFile(join(ctx.workspace.distDir, 'current', 'catalog.json'), 'utf8')) as {
        versions: { id: string; sha512: string }[];
      };
      for (const version of catalog.versions)
        assert.is(version.sha512, sha('sha512', ctx.versions.find((v) => v.id === version.id)!.jar), version.id);
      const list = await rawRequest(`${started.url}/api/plugin-versions/latest/PaperMC`);
      assert.is(list.status, 200);
      await until(() => started.stdout.some((line) => line.includes('"event":"swept"')), 'the origin settled');
      assert.equal(predatesLines(started), []);
      process.kill(-group, 'SIGTERM');
      await started.exited;
    } finally {
      if (started.child.exitCode === null) process.kill(-started.child.pid!, 'SIGKILL');
    }
  });

  test.run();
}
