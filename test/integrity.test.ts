import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { staticLayoutConfigs } from '../build/static-layout-configs.ts';
import { createApi } from '../server/app.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { Manifest } from '../server/tree/format.ts';
import { currentTreeDir, openTree, type Tree } from '../server/tree/open.ts';
import { listIntegrityPaths } from '../server/versions/integrity.ts';
import { HASH_ALGORITHMS, byHashPath, checksumPath, downloadPath } from '../server/versions/paths.ts';
import {
  findProgram,
  liveContext,
  makeWorkspace,
  pluginJar,
  rawRequest,
  ROOT,
  runBuildCommand,
  runDepot,
  serveBuiltTree,
  startTestOrigin,
  type ServedTree,
  type NginxServer,
  type RawAnswer,
  type Workspace,
} from './helpers.ts';

// Issue 15: integrity end to end. Repr-Digest checked against the bytes received, sidecars checked
// by the real sha256sum/sha512sum, lookup by hash for every version, on the origin and through the
// build's nginx.conf (nginx in front of the origin, on loopback).

const NGINX = findProgram('nginx');
if (!NGINX) console.warn('integrity.test.ts: nginx not installed, the nginx half not run (apt-get install -y nginx)');

const ctx = {} as {
  served: ServedTree;
  workspace: Workspace;
  origin: RunningOrigin;
  nginx: NginxServer | undefined;
  tree: Tree;
  manifest: Manifest;
  treeDir: string;
  /** Paths the origin answered: what nginx forwarded, besides the origin's own requests. */
  originPaths: string[];
  ready: Promise<void> | undefined;
};

const digest = (algorithm: 'sha256' | 'sha512', bytes: Uint8Array) => createHash(algorithm).update(bytes).digest('hex');

/** RFC 9530 / RFC 8941: `sha-256=:<base64>:, sha-512=:<base64>:` -> algorithm -> hex. */
function parseReprDigest(value: string | string[] | undefined): Record<string, string> {
  assert.type(value, 'string', 'Repr-Digest present');
  const entries = (value as string).split(',').map((member) => {
    const match = /^\s*([a-z0-9-]+)=:([A-Za-z0-9+/]*={0,2}):\s*$/.exec(member);
    if (!match) assert.unreachable(`not a structured-field byte sequence: ${member}`);
    return [match![1]!, Buffer.from(match![2]!, 'base64').toString('hex')] as const;
  });
  return Object.fromEntries(entries);
}

function assertDigestOf(answer: RawAnswer, bytes: Uint8Array, what: string) {
  const digests = parseReprDigest(answer.headers['repr-digest']);
  assert.equal(Object.keys(digests), ['sha-256', 'sha-512'], `${what}: algorithms`);
  assert.is(digests['sha-256'], digest('sha256', bytes), `${what}: sha-256`);
  assert.is(digests['sha-512'], digest('sha512', bytes), `${what}: sha-512`);
}

const run = (program: string, args: string[], cwd: string) =>
  new Promise<{ code: number; stdout: string }>((done) =>
    execFile(program, args, { cwd, timeout: 10_000 }, (error, stdout) =>
      done({ code: error ? Number(error.code ?? 1) : 0, stdout }),
    ),
  );

/** One build, origin and nginx for every suite of this file (a build takes seconds). */
const setup = () => (ctx.ready ??= start());

async function start() {
  ctx.originPaths = [];
  ctx.workspace = await makeWorkspace({ build: false });
  ctx.served = await serveBuiltTree(ctx.workspace, { log: (entry) => ctx.originPaths.push(entry.path) });
  ({ origin: ctx.origin, nginx: ctx.nginx, treeDir: ctx.treeDir, manifest: ctx.manifest } = ctx.served);
  ctx.tree = await openTree(ctx.treeDir);
}
async function teardown() {
  await ctx.served?.stop();
  await ctx.workspace?.remove();
}

const catalogSuite = suite('sha512 in the catalog and the version objects');
catalogSuite.before(setup);

catalogSuite('catalog.json and every version object carry both digests of the JAR as served', async () => {
  const catalogFile = JSON.parse(await readFile(join(ctx.treeDir, 'catalog.json'), 'utf8')) as {
    versions: { id: string; sha256: string; sha512: string }[];
  };
  assert.ok(catalogFile.versions.length >= 3, 'demo versions');
  const list = JSON.parse((await rawRequest(`${ctx.origin.url}/api/plugin-versions`)).body.toString()) as {
    versions: { id: string; sha256: string; sha512: string }[];
  };
  for (const stored of catalogFile.versions) {
    const jar = (await rawRequest(ctx.origin.url + downloadPath(stored.id))).body;
    assert.is(stored.sha512, digest('sha512', jar), `${stored.id}: catalog.json sha512`);
    const shown = list.versions.find((v) => v.id === stored.id)!;
    assert.is(shown.sha256, digest('sha256', jar), `${stored.id}: listed sha256`);
    assert.is(shown.sha512, digest('sha512', jar), `${stored.id}: listed sha512`);
  }
});

catalogSuite.run();

/** The same assertions against the origin and against nginx serving the built tree in front of it. */
function targets(): [string, string][] {
  return [['origin', ctx.origin.url], ...(ctx.nginx ? [['nginx', ctx.nginx.url] as [string, string]] : [])];
}

const headers = suite('Repr-Digest and Content-Location on every JAR answer');
headers.before(setup);

headers('by id: GET, HEAD and a 206 carry the digests of the whole JAR', async () => {
  let forwarded = ctx.originPaths.length;
  for (const [name, url] of targets()) {
    for (const version of ctx.tree.catalog.versions) {
      const path = downloadPath(version.id);
      const full = await rawRequest(url + path);
      assert.is(full.status, 200, `${name} ${path}`);
      assertDigestOf(full, full.body, `${name} ${path}`);
      assert.is(full.headers['content-location'], undefined, `${name} ${path}: an immutable answer names no other`);
      const head = await rawRequest(url + path, { method: 'HEAD' });
      assert.is(head.headers['repr-digest'], full.headers['repr-digest'], `${name} HEAD ${path}`);
      // RFC 9530 3: Repr-Digest is of the representation, not of the part sent.
      const part = await rawRequest(url + path, { headers: { range: 'bytes=0-9' } });
      assert.is(part.status, 206, `${name} ${path}: range`);
      assert.is(part.body.length, 10);
      assert.is(part.headers['repr-digest'], full.headers['repr-digest'], `${name} ${path}: 206`);
    }
    // nginx answered these from the tree, with the headers its nginx.conf gives them.
    if (name === 'nginx') assert.equal(ctx.originPaths.slice(forwarded), [], 'nothing reached the origin');
    else {
      await new Promise((resolve) => setTimeout(resolve, 200)); // the origin logs an answer once it is sent
      forwarded = ctx.originPaths.length;
    }
  }
});

headers(
  'latest downloads: the digests, and Content-Location naming the immutable copy with the same bytes',
  async () => {
    const paths = [
      '/api/plugin-versions/download/latest/papermc',
      '/api/plugin-versions/download/latest/velocity/21',
      '/api/plugin-versions/download/latest/PaperMC', // live on both: another letter case
    ];
    for (const [name, url] of targets()) {
      for (const path of paths) {
        const answer = await rawRequest(url + path);
        assert.is(answer.status, 200, `${name} ${path}`);
        assertDigestOf(answer, answer.body, `${name} ${path}`);
        const location = answer.headers['content-location'];
        assert.type(location, 'string', `${name} ${path}: Content-Location`);
        assert.match(location as string, /^\/api\/plugin-versions\/download\/plugin-\d+-[A-Za-z0-9]+$/);
        const copy = await rawRequest(url + (location as string));
        assert.is(copy.status, 200);
        assert.ok(copy.body.equals(answer.body), `${name} ${path}: Content-Location has the same bytes`);
        assert.is(copy.headers['repr-digest'], answer.headers['repr-digest']);
        const head = await rawRequest(url + path, { method: 'HEAD' });
        assert.is(head.headers['content-location'], location, `${name} HEAD ${path}`);
        const revalidated = await rawRequest(url + path, { headers: { 'if-none-match': String(answer.headers.etag) } });
        assert.is(revalidated.status, 304, `${name} ${path}: 304`);
      }
    }
  },
);

headers('a browser may read them: Repr-Digest and Content-Location are exposed to CORS', async () => {
  for (const [name, url] of targets()) {
    const answer = await rawRequest(`${url}/api/plugin-versions/download/latest/papermc`);
    assert.match(String(answer.headers['access-control-expose-headers']), /\bRepr-Digest\b/, name);
    assert.match(String(answer.headers['access-control-expose-headers']), /\bContent-Location\b/, name);
  }
});

headers.run();

const sidecars = suite('checksum sidecars (.sha256, .sha512)');
sidecars.before(setup);

sidecars(
  'sha256sum -c and sha512sum -c accept each version with its downloaded JAR, and refuse a changed one',
  async () => {
    for (const [name, url] of targets()) {
      for (const version of ctx.tree.catalog.versions) {
        const dir = await mkdtemp(join(tmpdir(), 'depot-sidecar-'));
        try {
          const jar = await rawRequest(url + downloadPath(version.id));
          await writeFile(join(dir, version.fileName), jar.body);
          for (const algorithm of HASH_ALGORITHMS) {
            const sidecar = await rawRequest(url + checksumPath(version.id, algorithm));
            assert.is(sidecar.status, 200, `${name} ${algorithm} ${version.id}`);
            assert.is(sidecar.headers['content-type'], 'text/plain; charset=utf-8');
            assert.is(sidecar.body.toString(), `${digest(algorithm, jar.body)}  ${version.fileName}\n`);
            await writeFile(join(dir, `check.${algorithm}`), sidecar.body);
            const checked = await run(`${algorithm}sum`, ['-c', `check.${algorithm}`], dir);
            assert.is(checked.code, 0, `${name} ${algorithm}sum -c ${version.id}: ${checked.stdout}`);
            assert.is(checked.stdout, `${version.fileName}: OK\n`);
          }
          const changed = Buffer.from(jar.body);
          changed[changed.length - 1]! ^= 1;
          await writeFile(join(dir, version.fileName), changed);
          for (const algorithm of HASH_ALGORITHMS) {
            const checked = await run(`${algorithm}sum`, ['-c', `check.${algorithm}`], dir);
            assert.is.not(checked.code, 0, `${name} ${algorithm}sum -c accepted a changed JAR`);
          }
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }
    }
  },
);

sidecars('an unknown id is a JSON 404; the JAR route still answers the JAR', async () => {
  for (const [name, url] of targets()) {
    const missing = await rawRequest(`${url}/api/plugin-versions/download/plugin-1-nothing.sha256`);
    assert.is(missing.status, 404, name);
    assert.match(JSON.parse(missing.body.toString()).error, /plugin-1-nothing/);
    const odd = await rawRequest(`${url}/api/plugin-versions/download/plugin-1-x.md5`);
    assert.is(odd.status, 404, `${name}: .md5`);
  }
});

sidecars.run();

const byHash = suite('lookup by hash');
byHash.before(setup);

byHash('every demo version is found by both digests of its bytes, as the latest endpoint presents it', async () => {
  for (const [name, url] of targets()) {
    for (const version of ctx.tree.catalog.versions) {
      const jar = (await rawRequest(url + downloadPath(version.id))).body;
      for (const algorithm of HASH_ALGORITHMS) {
        const path = byHashPath(algorithm, digest(algorithm, jar));
        const answer = await rawRequest(url + path);
        assert.is(answer.status, 200, `${name} ${path}`);
        const body = JSON.parse(answer.body.toString()) as { version: Record<string, unknown> };
        assert.is(body.version.id, version.id);
        assert.is(body.version[algorithm], digest(algorithm, jar));
        assert.is(body.version.createdByUser, undefined, 'as the latest endpoint: without createdByUser');
        // Upper-case hex is answered live, with the same bytes and ETag.
        const upper = await rawRequest(url + byHashPath(algorithm, digest(algorithm, jar).toUpperCase()));
        assert.is(upper.status, 200, `${name} ${path} in upper case`);
        assert.ok(upper.body.equals(answer.body), `${name} ${path}: upper case, same bytes`);
        assert.is(upper.headers.etag, answer.headers.etag);
      }
    }
  }
});

byHash('400 naming the parameter for a bad algorithm or hash; 404 JSON for an unknown digest', async () => {
  const cases: [string, number, RegExp][] = [
    [
      '/api/plugin-versions/by-hash/md5/d41d8cd98f00b204e9800998ecf8427e',
      400,
      /^algorithm must be one of sha256, sha512/,
    ],
    ['/api/plugin-versions/by-hash/SHA256/' + '0'.repeat(64), 400, /^algorithm must be one of sha256, sha512/],
    ['/api/plugin-versions/by-hash/sha256/xyz', 400, /^hash must be 64 hex digits/],
    ['/api/plugin-versions/by-hash/sha256/' + '0'.repeat(128), 400, /^hash must be 64 hex digits/],
    ['/api/plugin-versions/by-hash/sha512/' + '0'.repeat(64), 400, /^hash must be 128 hex digits/],
    ['/api/plugin-versions/by-hash/sha256/' + 'f'.repeat(64), 404, /^No plugin version has sha256 f{64}$/],
    ['/api/plugin-versions/by-hash/sha512/' + 'F'.repeat(128), 404, /^No plugin version has sha512 f{128}$/],
  ];
  for (const [name, url] of targets()) {
    for (const [path, status, message] of cases) {
      const answer = await rawRequest(url + path);
      assert.is(answer.status, status, `${name} ${path}`);
      assert.match(String(answer.headers['content-type']), /^application\/json/);
      assert.match(JSON.parse(answer.body.toString()).error, message, `${name} ${path}`);
    }
  }
});

byHash.run();

const parity = suite('precomputed integrity answers equal live ones');
parity.before(setup);
parity.after(teardown);

parity('every sidecar and lookup is in the manifest, and the live app answers its bytes and headers', async () => {
  const paths = listIntegrityPaths(ctx.tree.catalog);
  assert.is(paths.length, ctx.tree.catalog.versions.length * 4);
  const live = createApi(liveContext(ctx.tree));
  for (const path of paths) {
    const route = ctx.manifest.routes[path];
    assert.ok(route, `${path} is precomputed`);
    const answer = await live.request(path);
    assert.is(answer.status, route!.status, path);
    const bytes = new Uint8Array(await answer.arrayBuffer());
    const stored = await readFile(join(ctx.treeDir, route!.file));
    assert.ok(Buffer.from(bytes).equals(stored), `${path}: bytes`);
    for (const [name, value] of Object.entries(route!.headers))
      assert.is(answer.headers.get(name), value, `${path}: ${name}`);
  }
  // And the JAR answers' integrity headers reach the manifest, so nginx.conf.
  for (const version of ctx.tree.catalog.versions) {
    const route = ctx.manifest.routes[downloadPath(version.id)]!;
    assert.ok(route.headers['repr-digest'], `${version.id}: Repr-Digest in the manifest`);
  }
  const latest = ctx.manifest.routes['/api/plugin-versions/download/latest/papermc']!;
  // nginx.conf reads them from the route maps it includes (issue 32), keyed by request URI.
  const path = '"/api/plugin-versions/download/latest/papermc"';
  const nginxMap = (name: string) => readFile(join(ctx.treeDir, `nginx-header-${name}.map`), 'utf8');
  assert.ok((await nginxMap('repr-digest')).includes(`${path} "${latest.headers['repr-digest']}";`), 'nginx.conf');
  assert.ok((await nginxMap('content-location')).includes(`${path} "${latest.headers['content-location']}";`));
  // export-static's _headers (a rule per endpoint, not per path) cannot carry a digest that names
  // one file: it carries what every JAR answer shares, the exposed names of the digest headers, and
  // docs/deployment.md lists Repr-Digest and Content-Location as not sent by static hosts.
  const { headers } = staticLayoutConfigs(ctx.manifest.routes, 'http://localhost:3000');
  assert.not.match(headers, /^\s+(repr-digest|content-location):/im, '_headers carries no per-file digest');
  const rule = headers.slice(headers.indexOf('\n/api/plugin-versions/download/latest/:serverSoftware\n') + 1);
  const exposed = /^ {2}Access-Control-Expose-Headers: (.*)$/m.exec(rule.slice(0, rule.indexOf('\n/', 1)))?.[1];
  assert.ok(exposed?.split(', ').includes('Repr-Digest'), '_headers exposes Repr-Digest');
  assert.ok(exposed?.split(', ').includes('Content-Location'), '_headers exposes Content-Location');
  const documented = await readFile(join(ROOT, 'docs/deployment.md'), 'utf8').then((text) => text.replace(/\s+/g, ' '));
  assert.match(documented, /Repr-Digest and Content-Location, .*? are not sent\./, 'documented as not sent');
});

parity.run();

const release = suite('depot release: the new version carries its sha512 everywhere');
const released = {} as { workspace: Workspace; origin: RunningOrigin };
release.before(async () => {
  released.workspace = await makeWorkspace();
});
release.after(async () => {
  await released.origin?.close();
  await released.workspace.remove();
});

release('catalog.json, live and precomputed answers, and the next build of data/ agree', async () => {
  const { workspace } = released;
  const bytes = pluginJar('9.9.9-integrity');
  const file = join(workspace.dir, 'Integrity-9.9.9.jar');
  await writeFile(file, bytes);
  const result = await runDepot(
    ['release', file, '--version', '9.9.9', '--java', '21', '--software', 'PaperMC'],
    workspace,
  );
  assert.is(result.code, 0, result.stderr);
  const { id } = JSON.parse(result.stdout) as { id: string };
  const treeDir = (await currentTreeDir(workspace.distDir))!;
  const stored = JSON.parse(await readFile(join(treeDir, 'catalog.json'), 'utf8')) as {
    versions: { id: string; sha512?: string }[];
  };
  assert.is(stored.versions.find((v) => v.id === id)?.sha512, digest('sha512', bytes), "the release's catalog.json");
  released.origin = await startTestOrigin(workspace, { rateLimit: { limit: 100_000, windowSeconds: 900 } });
  // Another letter case: answered live, from the catalog.
  const live = await rawRequest(`${released.origin.url}/api/plugin-versions/latest/PaperMC/21`);
  const version = (JSON.parse(live.body.toString()) as { version: { id: string; sha512: string } }).version;
  assert.is(version.id, id);
  assert.is(version.sha512, digest('sha512', bytes));
  const found = await rawRequest(released.origin.url + byHashPath('sha512', digest('sha512', bytes)));
  assert.is(found.status, 200);
  assertDigestOf(await rawRequest(`${released.origin.url}/api/plugin-versions/download/latest/papermc/21`), bytes, id);
  // A build of data/ as the release left it makes the same tree: the release built its catalog as loadCatalog does.
  const again = await runBuildCommand(workspace);
  assert.is(again.code, 0, again.stderr);
  assert.is(await currentTreeDir(workspace.distDir), treeDir, 'the same tree');
});

release.run();
