import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createHash } from 'node:crypto';
import { cp, link, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { lock } from 'proper-lockfile';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { makePluginJar } from '../build/plugin-jar.ts';
import { standaloneNginxConfig } from '../build/deploy-configs.ts';
import { createAppContext, type AppContext } from '../server/context.ts';
import { Manifest, type RouteEntry } from '../server/tree/format.ts';
import { NO_ROUTES, type RouteLookup } from '../server/tree/routes.ts';
import { currentTreeDir, type Tree } from '../server/tree/open.ts';
import { ENCODING_EXTENSIONS } from '../server/http/compress.ts';
import { DataError } from '../server/data-files.ts';
import { startOrigin, type OriginOptions, type RunningOrigin } from '../server/origin.ts';
import { createMemoryStorage } from '../server/storage.ts';
import { checkEveryAnswer } from './openapi-conformance.ts';
import { DEPOT_CLI, ROOT, findProgram, freePort, stopProcess } from './processes.ts';

export { DEPOT_CLI, ROOT, findProgram, freePort, startRedis, type RedisServer } from './processes.ts';

// Every answer any test receives over HTTP must be what the OpenAPI document promises.
checkEveryAnswer();

export type Workspace = {
  dir: string;
  dataDir: string;
  distDir: string;
  storageDir: string;
  site: boolean;
  remove: () => Promise<void>;
};

/**
 * Rendered brand images shared by every test build (keyed by inputs, so sharing is safe): only the
 * first build of a run renders them. One per checkout: Astro and Vite keep their own caches there,
 * which two checkouts' test runs building at the same time must not share.
 */
export const SHARED_BUILD_CACHE = join(
  tmpdir(),
  `depot-test-build-cache-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}`,
);

/**
 * A temp copy of the demo data/ with its own dist/, built. The human site is left out (SITE=off)
 * unless a test is about it: every build that changes the catalog (a release, a user) would build
 * it again, and the API is the same either way.
 */
export async function makeWorkspace(options: { build?: boolean; site?: boolean } = {}): Promise<Workspace> {
  const dir = await mkdtemp(join(tmpdir(), 'depot-test-'));
  const dataDir = join(dir, 'data');
  const distDir = join(dir, 'dist');
  const site = options.site ?? false;
  if (options.build === false) {
    await cp(join(ROOT, 'data'), dataDir, { recursive: true });
  } else if (RUN_DIR) {
    const built = await demoBuiltOnce(RUN_DIR, site);
    await cp(join(built, 'data'), dataDir, { recursive: true });
    await linkBuiltTree(join(built, 'dist'), distDir);
  } else {
    await cp(join(ROOT, 'data'), dataDir, { recursive: true });
    await runBuild({ dataDir, distDir, cacheDir: SHARED_BUILD_CACHE, site });
  }
  return {
    dir,
    dataDir,
    distDir,
    storageDir: join(dir, 'storage'),
    site,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The folder `npm test` (test/run.ts) gives a run's files for what they share; unset when uvu runs one file alone. */
const RUN_DIR = process.env.TEST_RUN_DIR;

/**
 * The demo data/ and its build (with or without the site), made once per `npm test` run by the
 * first file that asks, under a lock other files wait on; every later workspace links to it.
 */
async function demoBuiltOnce(runDir: string, site: boolean): Promise<string> {
  const dir = join(runDir, site ? 'demo-with-site' : 'demo');
  const done = join(dir, 'built');
  if (existsSync(done)) return dir;
  await mkdir(runDir, { recursive: true });
  const release = await lock(dir, {
    realpath: false,
    lockfilePath: `${dir}.lock`,
    retries: { retries: 600, minTimeout: 200, maxTimeout: 200 },
  });
  try {
    if (!existsSync(done)) {
      await rm(dir, { recursive: true, force: true });
      await cp(join(ROOT, 'data'), join(dir, 'data'), { recursive: true });
      await runBuild({ dataDir: join(dir, 'data'), distDir: join(dir, 'dist'), cacheDir: SHARED_BUILD_CACHE, site });
      await writeFile(done, '');
    }
  } finally {
    await release();
  }
  return dir;
}

/**
 * A workspace's dist/ as hard links to a shared build: free to make, and safe because every writer
 * of dist/ writes a new file and renames it over the old (a link is then replaced, never written
 * through). nginx.conf names its own folder, so each tree's is written anew for this dist/.
 */
async function linkBuiltTree(from: string, to: string): Promise<void> {
  for (const entry of await readdir(from, { recursive: true, withFileTypes: true })) {
    const source = join(entry.parentPath, entry.name);
    const target = join(to, relative(from, source));
    await mkdir(dirname(target), { recursive: true });
    if (entry.isDirectory()) await mkdir(target, { recursive: true });
    else if (entry.isSymbolicLink()) await symlink(await readlink(source), target);
    else await link(source, target);
  }
  for (const tree of await readdir(join(to, 'trees'))) {
    const conf = join(to, 'trees', tree, 'nginx.conf');
    if (!existsSync(conf)) continue;
    const text = (await readFile(conf, 'utf8')).replaceAll(from, to);
    await rm(conf);
    await writeFile(conf, text);
  }
}

/**
 * `dir`/node_modules as a folder of its own with each of this checkout's packages linked in it: a
 * project there runs on the same packages, and keeps its own node_modules/.cache (the CLI's bundle,
 * whose stamp names its checkout, would otherwise be rebuilt under every other file's CLI).
 */
export async function linkNodeModules(dir: string): Promise<void> {
  await mkdir(join(dir, 'node_modules'));
  for (const name of await readdir(join(ROOT, 'node_modules'))) {
    if (name !== '.cache') await symlink(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name));
  }
}

/** The project's files (not node_modules, dist/ or state) in a temp folder named `prefix`..., node_modules linked. */
export async function copyProject(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const skip = new Set(['node_modules', '.git', 'dist', '.storage', '.screenshots']);
  for (const name of await readdir(ROOT)) {
    if (!skip.has(name)) await cp(join(ROOT, name), join(dir, name), { recursive: true });
  }
  await linkNodeModules(dir);
  return dir;
}

/** A build of the workspace's data/ without the site, with the tests' shared build cache. */
export const buildApi = (workspace: Pick<Workspace, 'dataDir' | 'distDir'>) =>
  runBuild({ dataDir: workspace.dataDir, distDir: workspace.distDir, cacheDir: SHARED_BUILD_CACHE, site: false });

/** What `depot release` writes, without its build: a JAR and its record (PaperMC, Java 21) in data/. Returns its sha256. */
export async function addPaperVersion(
  dataDir: string,
  version: string,
  bytes: Uint8Array,
  fields: { serverSoftware?: string[]; javaVersion?: string; channel?: string } = {},
): Promise<string> {
  const at = new Date().toISOString();
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const id = `plugin-${Date.now()}-${sha256.slice(0, 12)}`;
  await writeFile(join(dataDir, 'jars', `${id}.jar`), bytes);
  const record = {
    ...{ id, serverSoftware: ['PaperMC'], pluginVersion: version, javaVersion: '21', proxyVersion: null },
    ...{ fileName: `Api-${version}.jar`, fileSize: bytes.length, sha256, createdAt: at, updatedAt: at },
    createdBy: 'test',
    ...fields,
  };
  await writeFile(join(dataDir, 'versions', `${id}.json`), JSON.stringify(record));
  return sha256;
}

/** Every route of a tree, each looked up (and so validated) in the manifest's order. */
export function allRoutes(routes: RouteLookup): Map<string, RouteEntry> {
  const all = new Map<string, RouteEntry>();
  for (const path of routes.paths()) {
    const entry = routes.get(path);
    if (entry) all.set(path, entry);
  }
  return all;
}

/**
 * The same parts the origin builds, for calling the app in-process with no static edge and no
 * precomputed routes: every answer is computed live (images rendered by sharp).
 */
export function liveContext(tree: Tree): AppContext {
  const liveTree = { ...tree, routes: NO_ROUTES };
  return createAppContext(createMemoryStorage(), { tree: () => liveTree });
}

/** The origin in-process on a free loopback port; state in memory unless the test shares files with the CLI. */
export async function startTestOrigin(
  workspace: Workspace,
  options: Partial<OriginOptions> = {},
): Promise<RunningOrigin> {
  return startOrigin({
    distDir: workspace.distDir,
    host: '127.0.0.1',
    port: 0,
    storage: createMemoryStorage(),
    ...options,
  });
}

export type CliResult = { code: number; stdout: string; stderr: string };

/** Runs the operator CLI as an operator would, in a child process. */
export function runDepot(args: string[], workspace: Workspace, env: Record<string, string> = {}): Promise<CliResult> {
  return runScript(DEPOT_CLI, args, workspace, env);
}

/** `npm run build` as an operator runs it (`--if-changed`: as `npm start` does first), with the workspace's folders and `env`. */
export function runBuildCommand(
  workspace: Workspace,
  env: Record<string, string> = {},
  args: string[] = [],
): Promise<CliResult> {
  return runScript('build/main.ts', args, workspace, env);
}

/** The configuration our scripts read: the workspace's folders, the shared build cache, the site on or off, and `env`. */
export function workspaceEnv(workspace: Workspace, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const folders = {
    DATA_DIR: workspace.dataDir,
    DIST_DIR: workspace.distDir,
    STORAGE_DIR: workspace.storageDir,
    BUILD_CACHE_DIR: SHARED_BUILD_CACHE,
  };
  return { ...process.env, ...folders, SITE: workspace.site ? 'on' : 'off', ...env };
}

/** How node runs one of our scripts: TypeScript through tsx, JavaScript as it is. */
const nodeArgs = (script: string) => (script.endsWith('.ts') ? ['--import', 'tsx'] : []).concat(join(ROOT, script));

/** One of our scripts in a child process, with the workspace's folders (and `env`) as its configuration. */
function runScript(
  script: string,
  args: string[],
  workspace: Workspace,
  env: Record<string, string>,
): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...nodeArgs(script), ...args],
      { cwd: ROOT, env: workspaceEnv(workspace, env), timeout: 120_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

export type ScriptProcess = {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
};

/** Like runDepot and runBuildCommand, for a test that signals the script while it runs (e.g. build/main.ts). */
export function spawnScript(
  script: string,
  args: string[],
  workspace: Workspace,
  env: Record<string, string> = {},
): ScriptProcess {
  const child = spawn(process.execPath, [...nodeArgs(script), ...args], {
    cwd: ROOT,
    env: workspaceEnv(workspace, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  // Bounded like runScript: a script that hangs is killed after 2 minutes.
  const limit = setTimeout(() => child.kill('SIGKILL'), 120_000);
  void exited.then(() => clearTimeout(limit));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/**
 * A small valid plugin JAR (a manifest and plugin.yml); `version` makes its bytes unique. With
 * `software`, the descriptors those softwares load (issue 31: a release checks them): plugin.yml
 * says `folia-supported: true` for Folia and CanvasMC, velocity-plugin.json and bungee.yml are added
 * for the proxies.
 */
export function pluginJar(version: string, software: readonly string[] = []): Uint8Array {
  const claims = (...names: string[]) => names.some((name) => software.includes(name));
  const folia = claims('Folia', 'CanvasMC') ? 'folia-supported: true\n' : '';
  const files: Record<string, string> = {
    'plugin.yml': `name: TestPlugin\nversion: ${version}\nmain: org.example.Test\n${folia}`,
  };
  if (claims('Velocity'))
    files['velocity-plugin.json'] = JSON.stringify({ id: 'testplugin', version, main: 'org.example.TestVelocity' });
  if (claims('BungeeCord', 'Waterfall'))
    files['bungee.yml'] = `name: TestPlugin\nversion: ${version}\nmain: org.example.TestBungee\n`;
  return makePluginJar({ files });
}

/** Every file under `dir` (relative path -> sha256 of its bytes), to assert a folder was left byte for byte as it was. */
export async function snapshotFiles(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    files[path.slice(dir.length + 1)] = entry.isFile()
      ? createHash('sha256')
          .update(await readFile(path))
          .digest('hex')
      : entry.isDirectory()
        ? 'folder'
        : 'other';
  }
  return files;
}

/**
 * A built tree as its readers see it: snapshotFiles of its own files, and of every file its
 * manifest names (each route's file and its codings, read through the tree's `files` link to dist/files).
 */
export async function snapshotTree(treeDir: string): Promise<Record<string, string>> {
  const files = await snapshotFiles(treeDir);
  delete files.files;
  const manifest = JSON.parse(await readFile(join(treeDir, 'manifest.json'), 'utf8')) as Manifest;
  for (const entry of Object.values(manifest.routes)) {
    for (const file of [entry.file, ...(entry.encodings ?? []).map((e) => `${entry.file}.${ENCODING_EXTENSIONS[e]}`)])
      files[file] = createHash('sha256')
        .update(await readFile(join(treeDir, file)))
        .digest('hex');
  }
  return files;
}

/** Corrupts a fresh copy of data/, then checks that `load` refuses it with a DataError matching `message`. */
export async function assertRefusesData(
  corrupt: (dataDir: string) => Promise<unknown>,
  load: (dataDir: string) => Promise<unknown>,
  message: RegExp,
) {
  const workspace = await makeWorkspace({ build: false });
  try {
    await corrupt(workspace.dataDir);
    const error = await load(workspace.dataDir).then(
      () => null,
      (e: unknown) => e,
    );
    assert.instance(error, DataError);
    assert.match((error as Error).message, message);
  } finally {
    await workspace.remove();
  }
}

export type Accounts = {
  owner: string;
  other: string;
  publicServer: { id: string; ingestKey: string };
  privateServer: { id: string; ingestKey: string };
};

/** Two users and two servers of the first (one public, one private), made with the operator CLI. */
export async function makeAccounts(workspace: Workspace, env: Record<string, string> = {}): Promise<Accounts> {
  const depot = async (args: string[]) => {
    const result = await runDepot(args, workspace, env);
    assert.is(result.code, 0, result.stderr);
    return JSON.parse(result.stdout);
  };
  const owner = await depot(['user', 'add', 'olivia', '--nickname', 'Olivia']);
  const other = await depot(['user', 'add', 'mallory']);
  return {
    owner: owner.token,
    other: other.token,
    publicServer: await depot(['server', 'add', '--owner', 'olivia', '--name', 'Public SMP']),
    privateServer: await depot(['server', 'add', '--owner', 'olivia', '--private']),
  };
}

export type RawAnswer = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer };

/** A request over node:http, which (unlike fetch) hands back the bytes exactly as sent: compressed stays compressed. */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.setTimeout(30_000, () => request.destroy(new Error(`${url}: no answer in 30 s`)));
    request.end();
  });
}

export type OriginProcess = {
  child: ChildProcess;
  url: string;
  stdout: string[];
  stderr: string[];
  exited: Promise<number | null>;
};

/**
 * `server/main.ts` as operators run it, in a child process on a free loopback port. With `npmStart`
 * it is `npm start` instead (its build step skips an unchanged tree), in a process group of its own
 * (the child's pid is the group's id), as systemd or a terminal runs it; stdout then also holds
 * npm's banner lines besides the origin's JSON lines.
 */
export async function spawnOrigin(
  workspace: Workspace,
  env: Record<string, string> = {},
  options: { npmStart?: boolean } = {},
): Promise<OriginProcess> {
  const [command, args] = options.npmStart
    ? ['npm', ['start']]
    : [process.execPath, ['--import', 'tsx', 'server/main.ts']];
  const folders = {
    DIST_DIR: workspace.distDir,
    DATA_DIR: workspace.dataDir,
    STORAGE_DIR: workspace.storageDir,
    BUILD_CACHE_DIR: SHARED_BUILD_CACHE,
  };
  const child = spawn(command as string, args as string[], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...folders, SITE: workspace.site ? 'on' : 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.npmStart ?? false,
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const lines = (into: string[]) => (chunk: Buffer) => into.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout!.on('data', lines(stdout));
  child.stderr!.on('data', lines(stderr));
  const kill = () => (options.npmStart ? process.kill(-child.pid!, 'SIGKILL') : child.kill('SIGKILL'));
  // Bounds on a start, not its speed (that is the bench's): npm start may first rebuild the tree.
  const deadline = Date.now() + (options.npmStart ? 120_000 : 60_000);
  let listening: string | undefined;
  while (!(listening = stdout.find((line) => line.includes('"event":"listening"')))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const why = child.exitCode === null ? 'not listening in time' : `exited with ${child.exitCode}`;
      if (child.exitCode === null) kill();
      throw new Error(
        `${options.npmStart ? 'npm start' : 'server/main.ts'} did not start (${why}): ${stderr.join('\n')}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url: (JSON.parse(listening) as { url: string }).url, stdout, stderr, exited };
}

/** A copy of the demo data served by a spawned origin, with a publishing token of alice's made as an operator makes one. */
export async function startPublishing(): Promise<{ workspace: Workspace; origin: OriginProcess; token: string }> {
  const workspace = await makeWorkspace();
  const added = await runDepot(
    ['token', 'add', 'alice', '--name', 'ci', '--scopes', 'publish,edit,withdraw', '--any-version'],
    workspace,
  );
  assert.is(added.code, 0, added.stderr);
  const token = (JSON.parse(added.stdout) as { token: string }).token;
  return { workspace, origin: await spawnOrigin(workspace), token };
}

/** Stops a spawned origin once the last publish's build is done (a publish's full build goes on after its answer), and removes its workspace. */
export async function stopPublishing({ workspace, origin }: { workspace: Workspace; origin: OriginProcess }) {
  await until(() => !existsSync(join(workspace.distDir, '.build.lock')), 'the last build', 120_000);
  origin.child.kill('SIGTERM');
  await origin.exited;
  await workspace.remove();
}

/** A built workspace served as operators deploy it: its origin, and Debian's nginx in front when installed. */
export type ServedTree = {
  origin: RunningOrigin;
  nginx: NginxServer | undefined;
  treeDir: string;
  manifest: Manifest;
  stop: () => Promise<void>;
};

/**
 * `npm run build` with its nginx.conf sending to an origin on a free loopback port (nginx's own
 * limit raised: these tests ask thousands of answers), then that origin (`origin` options on top of
 * a raised limit, and its own address as PUBLIC_URL, so absolute links lead to it) and, when
 * installed, nginx with the build's config.
 */
export async function serveBuiltTree(workspace: Workspace, origin: Partial<OriginOptions> = {}): Promise<ServedTree> {
  const [originPort, nginxPort] = [await freePort(), await freePort()];
  const built = await runBuildCommand(workspace, {
    NGINX_ORIGINS: `127.0.0.1:${originPort}`,
    NGINX_LISTEN: `127.0.0.1:${nginxPort}`,
    RATE_LIMIT: '100000/15m',
  });
  assert.is(built.code, 0, built.stderr);
  const running = await startTestOrigin(workspace, {
    port: originPort,
    rateLimit: { limit: 100_000, windowSeconds: 900 },
    publicUrl: `http://127.0.0.1:${originPort}`,
    ...origin,
  });
  const treeDir = (await currentTreeDir(workspace.distDir))!;
  const manifest = Manifest.parse(JSON.parse(await readFile(join(treeDir, 'manifest.json'), 'utf8')));
  const program = findProgram('nginx');
  const nginx = program ? await startNginx(program, join(treeDir, 'nginx.conf'), nginxPort) : undefined;
  return {
    origin: running,
    nginx,
    treeDir,
    manifest,
    stop: async () => {
      await nginx?.stop();
      await running.close();
    },
  };
}

export type NginxServer = {
  url: string;
  pid: number;
  errors: () => Promise<string>;
  reload: () => Promise<void>;
  stop: () => Promise<void>;
};

/**
 * Debian's nginx in the foreground on a loopback port, with a minimal main config that includes
 * `include` (the build's nginx.conf) inside http { }, as README's deployment guide does.
 */
export async function startNginx(
  program: string,
  include: string,
  port: number,
  options: { accessLog?: string } = {},
): Promise<NginxServer> {
  const dir = await mkdtemp(join(tmpdir(), 'depot-nginx-'));
  await writeFile(join(dir, 'nginx.conf'), standaloneNginxConfig(dir, include, 2, options.accessLog));
  const child = spawn(program, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const errors = () => readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
  const answers = () =>
    fetch(`http://127.0.0.1:${port}/healthz`).then(
      () => true,
      () => false,
    );
  const deadline = Date.now() + 10_000;
  while (!(await answers())) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`nginx did not start: ${await errors()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    errors,
    // SIGHUP: nginx reads the (new) config and starts new workers; old ones finish their requests.
    reload: async () => {
      const started = (text: string) => text.split('\n').filter((line) => line.includes('start worker process')).length;
      const before = started(await errors());
      child.kill('SIGHUP');
      await until(async () => started(await errors()) > before, 'nginx reloaded its config');
    },
    stop: async () => {
      await stopProcess(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `condition` every 50 ms until it holds; fails the test after `ms`, saying `what` (computed then, when a function). */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string | (() => string),
  ms = 15_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.unreachable(`${typeof what === 'function' ? what() : what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Debian's chromium as CI runs it: headless, and unable to reach any host beyond loopback. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--proxy-server=http://127.0.0.1:9',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];
