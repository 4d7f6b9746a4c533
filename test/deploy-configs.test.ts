import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { suite } from 'uvu';
import { assertNginxAccepts } from './nginx-check.ts';
import * as assert from 'uvu/assert';
import { parse as parseDisposition } from 'content-disposition';
import { runBuild } from '../build/build.ts';
import { nginxFiles, type nginxConfig } from '../build/deploy-configs.ts';
import { ROUTES_FILE } from '../build/nginx-routes.ts';
import { staticLayoutConfigs } from '../build/static-layout-configs.ts';
import { startStaticHost } from './static-host.ts';
import { DEFAULT_DEPLOY, ORIGIN_KEEP_ALIVE_MS, readConfig } from '../server/config.ts';
import { NOT_FOUND_PAGE } from '../server/tree/format.ts';
import { Manifest } from '../server/tree/format.ts';
import { currentTreeDir } from '../server/tree/open.ts';
import {
  SHARED_BUILD_CACHE,
  findProgram,
  freePort,
  makeWorkspace,
  pluginJar,
  rawRequest,
  ROOT,
  runDepot,
  startNginx,
  startTestOrigin,
  type Workspace,
} from './helpers.ts';

const ctx = {} as { workspace: Workspace; treeDir: string; manifest: Manifest };
const setup = async () => {
  ctx.workspace = await makeWorkspace();
  ctx.treeDir = (await currentTreeDir(ctx.workspace.distDir))!;
  ctx.manifest = Manifest.parse(JSON.parse(await readFile(join(ctx.treeDir, 'manifest.json'), 'utf8')));
};

/**
 * Headers a static host sends itself, and a JAR's digests, which name one file each: no rule per
 * endpoint carries them (docs/deployment.md, Static hosts: Per-path headers).
 */
const HOST_OWN = [
  'etag',
  'vary',
  'accept-ranges',
  'content-length',
  'content-encoding',
  'repr-digest',
  'content-location',
];

const hosts = suite('_redirects and _headers (static hosts): from export-static, not in the tree');
const exported = {} as { dir: string; configs: ReturnType<typeof staticLayoutConfigs> };
hosts.before(async () => {
  await setup();
  exported.dir = join(ctx.workspace.dir, 'public');
  const result = await runDepot(['export-static', exported.dir], ctx.workspace);
  assert.is(result.code, 0, result.stderr);
  exported.configs = staticLayoutConfigs(ctx.manifest.routes, 'http://localhost:3000');
});
hosts.after(() => ctx.workspace.remove());
hosts(
  'export-static removes only its own exports: a folder it did not make, or a link, is refused untouched',
  async () => {
    const dir = ctx.workspace.dir;
    // A <dir>.exports holding a file of someone else's.
    await mkdir(join(dir, 'pub.exports'));
    await writeFile(join(dir, 'pub.exports', 'precious.txt'), 'keep me');
    // A <dir>.exports that is a link to another folder: its files are not the command's to remove.
    await mkdir(join(dir, 'victim'));
    await writeFile(join(dir, 'victim', 'data.txt'), 'keep me too');
    await symlink(join(dir, 'victim'), join(dir, 'two.exports'));
    for (const [name, why] of [
      ['pub', /pub\.exports holds precious\.txt, which this command never makes/],
      ['two', /two\.exports is a symbolic link, which this command never makes/],
    ] as const) {
      const refused = await runDepot(['export-static', join(dir, name)], ctx.workspace);
      assert.is(refused.code, 1, name);
      assert.match(refused.stderr, why);
      assert.not.ok(existsSync(join(dir, name)), `${name}: no export written`);
    }
    assert.is(await readFile(join(dir, 'pub.exports', 'precious.txt'), 'utf8'), 'keep me');
    assert.equal(await readdir(join(dir, 'victim')), ['data.txt']);
    // The export of the suite's start still stands, its folder holding the tree's export alone.
    assert.equal(await readdir(`${exported.dir}.exports`), [basename(ctx.treeDir)]);
  },
);

hosts('the tree has no per-path _headers, _redirects or 404.html: no static host could take them', async () => {
  // 61,000 rules each at 10,000 versions, where Cloudflare Pages takes 2,100 and 100 (issue 32).
  for (const name of ['_headers', '_redirects', '404.html']) assert.not.ok(existsSync(join(ctx.treeDir, name)), name);
});
hosts('_redirects: every plain path is answered from its file, the rest goes to the origin', async () => {
  const lines = (await readFile(join(exported.dir, '_redirects'), 'utf8'))
    .split('\n')
    .filter((line) => line && !line.startsWith('#'));
  assert.is(
    lines.at(-1),
    '/* http://localhost:3000/:splat 200',
    'the catch-all comes last: these hosts apply the first match',
  );
  assert.not.ok(
    lines.some((line) => line.includes('?')),
    'no query strings: these hosts cannot match them',
  );
  const expected = Object.entries(ctx.manifest.routes).filter(
    ([path, route]) => !path.includes('?') && route.status === 200,
  );
  assert.is(exported.configs.files.length + exported.configs.skipped.length, expected.length);
  // Cloudflare Pages applies the rules before its files: the stricter of the two hosts.
  const host = await startStaticHost(exported.dir, 'cloudflare');
  try {
    for (const [path, route] of expected) {
      if (exported.configs.skipped.includes(path)) continue;
      const answer = await rawRequest(`${host.url}${path}`);
      assert.is(answer.status, 200, path);
      assert.ok(answer.body.equals(await readFile(join(ctx.treeDir, route.file))), `${path}: its file`);
    }
  } finally {
    await host.close();
  }
});
hosts("_headers gives each path the origin's headers, less those a host cannot carry per path", async () => {
  const templates = new Map(exported.configs.files.map((file) => [file.path, file.template]));
  const host = await startStaticHost(exported.dir, 'netlify');
  try {
    for (const { path, entry } of exported.configs.files) {
      const answer = await rawRequest(`${host.url}${path}`);
      const notCarried = exported.configs.notCarried.get(templates.get(path)!) ?? new Set();
      for (const [name, value] of Object.entries(entry.headers)) {
        if (name in answer.headers && name !== 'content-type')
          assert.is(answer.headers[name], value, `${path}: ${name}`);
        // A host's own (ETag and codings), or listed as not carried (docs/deployment.md, Static hosts).
        else if (!(name in answer.headers))
          assert.ok(HOST_OWN.includes(name) || notCarried.has(name), `${path}: ${name} missing`);
      }
    }
  } finally {
    await host.close();
  }
});

hosts.run();

const NGINX = findProgram('nginx');

const nginx = suite('nginx.conf');
nginx.before(setup);
nginx.after(() => ctx.workspace.remove());
nginx(
  'the build writes it with the defaults: one origin on :3000, listening on 8080, SPEC 8 approximated',
  async () => {
    const text = await readFile(join(ctx.treeDir, 'nginx.conf'), 'utf8');
    assert.match(text, /server 127\.0\.0\.1:3000 max_fails=1 fail_timeout=10s;/);
    assert.match(text, /listen 8080;/);
    assert.match(text, /limit_req_zone \$depot_client zone=depot_limit:10m rate=7r\/m;/);
    assert.match(
      text,
      new RegExp(`alias ${ctx.treeDir.replaceAll('/', '\\/')}\\/files\\/`),
      'files are named inside this very tree',
    );
    const served = Object.entries(ctx.manifest.routes).filter(([, route]) => route.status === 200);
    // One line per answer in the included route map; one location per header class in nginx.conf.
    const routeMap = await readFile(join(ctx.treeDir, ROUTES_FILE), 'utf8');
    const classOf = new Map(
      routeMap
        .trim()
        .split('\n')
        .map((line) => /^"1(.*)" (\d+)\/[0-9a-f]{64}\.\w+;$/.exec(line)!)
        .map(([, path, index]) => [path!.replaceAll('\\"', '"').replaceAll('\\\\', '\\'), index!]),
    );
    assert.is(classOf.size, served.length);
    const classes = text.match(/^ {4}location ~ "\^\/_depot\/\d+\//gm)?.length ?? 0;
    assert.ok(classes > 5 && classes < 40, `${classes} header classes`);
    assert.ok(text.length < 100_000, `${text.length} bytes`);
    // Each route's class location; the limit covers the API's counted answers.
    const location = (path: string) =>
      new RegExp(`location ~ "\\^/_depot/${classOf.get(path)}/[^\n]*\n[\\s\\S]*?\n {4}\\}`).exec(text)?.[0] ?? '';
    for (const path of ['/api/plugin-versions', '/api/plugin-versions/download/latest/papermc', '/api/charts/example'])
      assert.match(location(path), /limit_req zone=depot_limit burst=99 nodelay;/, path);
    for (const path of ['/brand/papermc/light.png', '/api/image/brand/papermc?variant=light&size=64&format=webp'])
      assert.not.match(location(path), /limit_req/, `${path}: precomputed images do not count (SPEC 8)`);
    assert.match(
      location('/api/plugin-versions'),
      /return 304;[\s\S]*add_header content-encoding \$depot_coding_name always;/,
    );
  },
);
nginx('nginx closes an idle connection to an origin before the origin does (a POST on it would be a 502)', async () => {
  const text = await readFile(join(ctx.treeDir, 'nginx.conf'), 'utf8');
  const upstreams = [...text.matchAll(/^upstream (\w+) \{([^}]*)\}/gm)];
  assert.equal(
    upstreams.map(([, name]) => name),
    ['depot_origins', 'depot_publish'],
  );
  for (const [, name, body] of upstreams) {
    const idle = Number(/keepalive_timeout (\d+)s;/.exec(body!)?.[1]);
    assert.ok(idle * 1000 < ORIGIN_KEEP_ALIVE_MS, `${name}: ${idle} s, the origin ${ORIGIN_KEEP_ALIVE_MS} ms`);
  }
  const origin = await startTestOrigin(ctx.workspace);
  try {
    assert.is(origin.server.keepAliveTimeout, ORIGIN_KEEP_ALIVE_MS, 'the origin keeps idle connections that long');
  } finally {
    await origin.close();
  }
});

nginx('nginx.conf does not grow with versions: more routes of the same kinds, the same locations', () => {
  const options = { ...DEFAULT_DEPLOY, treeDir: '/srv/t', rateLimit: { limit: 100, windowSeconds: 900 } };
  const routes = ctx.manifest.routes;
  const more = { ...routes };
  const downloads = Object.entries(routes).filter(([path]) => /^\/api\/plugin-versions\/download\/plugin-/.test(path));
  for (let copy = 0; copy < 200; copy++)
    for (const [path, route] of downloads) {
      const sha256 = createHash('sha256').update(`${copy}${path}`).digest('hex');
      more[`${path}-${copy}`] = {
        ...route,
        file: `files/${sha256}.jar`,
        headers: { ...route.headers, etag: `"${sha256}"` },
      };
    }
  const [small, large] = [nginxFiles(routes, options), nginxFiles(more, options)];
  const locations = (conf: string) =>
    conf
      .split('\n')
      .filter((line) => line.includes('location'))
      .join('\n');
  assert.ok(downloads.length * 200 > 1000, `${downloads.length * 200} more routes`);
  assert.is(locations(large.conf), locations(small.conf));
  assert.ok(Math.abs(large.conf.length - small.conf.length) < 100, `${small.conf.length} then ${large.conf.length}`);
  const lines = (text: string) => text.split('\n').length;
  assert.is(
    lines(large.included[ROUTES_FILE]!),
    lines(small.included[ROUTES_FILE]!) + downloads.length * 200,
    'the routes are in the map',
  );
});
const variants: [string, Parameters<typeof nginxConfig>[1]][] = [
  [
    'no rate limit',
    {
      origins: ['10.0.0.5:3000', '10.0.0.6:3000'],
      listen: '8080',
      realIpFrom: [],
      originUrl: 'https://o.example',
      treeDir: '/srv/t',
      rateLimit: null,
    },
  ],
  [
    'behind a CDN, on IPv6',
    {
      origins: ['[::1]:3000'],
      listen: '[::1]:8080',
      realIpFrom: ['173.245.48.0/20', '2400:cb00::/32'],
      originUrl: 'https://o.example',
      treeDir: '/srv/t',
      rateLimit: { limit: 50, windowSeconds: 60 },
    },
  ],
];
/** The manifest with the site's 404 page (these builds leave the site out): nginx.conf then has its page rules. */
const withSite = () => {
  const [, any] = Object.entries(ctx.manifest.routes)[0]!;
  const page = {
    ...any,
    headers: { 'cache-control': 'public, max-age=60', 'content-type': 'text/html; charset=utf-8' },
  };
  return { ...ctx.manifest.routes, [NOT_FOUND_PAGE]: page };
};
for (const [name, options, site] of variants.flatMap(([name, options]) => [
  [name, options, false] as const,
  [`${name}, with the site`, options, true] as const,
])) {
  nginx(`generated ${name}: nginx -t accepts it`, async () => {
    const { conf: text, included } = nginxFiles(site ? withSite() : ctx.manifest.routes, options);
    assert.is(text.includes('limit_req'), options.rateLimit !== null);
    assert.is(text.includes('real_ip_header X-Forwarded-For;'), options.realIpFrom.length > 0);
    assert.is(text.includes('error_page 404 /_depot/not-found;'), site, 'page rules only with the site');
    await assertNginxAccepts(text, included);
  });
}
nginx('a hostile deployment setting is refused by its name, or reaches nginx.conf as written', async () => {
  const fragments = ['/srv', ';', '{', '}', '$var', '#', '\\', ']]>]]>', '\n', '\u0001', '\u007f', '\u202e', '\u2028'];
  const hostile = fc
    .array(
      fc.oneof(fc.constantFrom(...fragments), fc.string({ maxLength: 8 }), fc.constantFrom(':0', ':99999', ':443')),
      {
        maxLength: 6,
      },
    )
    .map((parts) => parts.join(''));
  const settings = ['DEPLOY_DIST_DIR', 'NGINX_LISTEN', 'NGINX_ORIGINS', 'NGINX_PUBLISH_ORIGIN'] as const;
  let accepted = 0;
  fc.assert(
    fc.property(fc.constantFrom(...settings), hostile, (name, value) => {
      let config: ReturnType<typeof readConfig>;
      try {
        config = readConfig({ [name]: value, DIST_DIR: '/srv/d' });
      } catch (error) {
        assert.match(String(error), new RegExp(`${name}: must be`));
        return;
      }
      accepted++;
      const { conf } = nginxFiles(ctx.manifest.routes, {
        ...config.deploy,
        treeDir: `${config.deploy.distDir ?? '/srv/d'}/trees/t`,
        rateLimit: null,
      });
      const written = value.trim().split(',')[0]!.trim();
      if (written) assert.ok(conf.includes(written), `${name}=${JSON.stringify(value)} is in nginx.conf as written`);
    }),
    { numRuns: 400 },
  );
  assert.ok(accepted > 10, `${accepted} hostile values were accepted: the property tried the generator too`);
  // The bounds nginx -t would refuse later, refused when the setting is read.
  for (const [env, message] of [
    [{ DEPLOY_DIST_DIR: `/srv/${'a'.repeat(1_000_000)}` }, /DEPLOY_DIST_DIR: must be an absolute path of at most/],
    [{ DEPLOY_DIST_DIR: '/srv/a\u0001b' }, /DEPLOY_DIST_DIR: .*control characters/],
    [{ NGINX_LISTEN: '99999' }, /NGINX_LISTEN: must be a port or address:port \(the port 1 to 65535\)/],
    [{ NGINX_ORIGINS: '10.0.0.5:0' }, /NGINX_ORIGINS: must be/],
    [{ NGINX_PUBLISH_ORIGIN: `${'a'.repeat(254)}:3000` }, /NGINX_PUBLISH_ORIGIN: must be/],
  ] as const)
    assert.throws(() => readConfig(env), message);
});

nginx('the deployment settings are checked like every other setting', () => {
  const refusals: [Record<string, string>, RegExp][] = [
    [{ NGINX_ORIGINS: 'origin-without-port' }, /NGINX_ORIGINS: must be a comma-separated list of host:port/],
    [{ NGINX_LISTEN: 'eighty' }, /NGINX_LISTEN: must be a port or address:port/],
    [
      { NGINX_REAL_IP_FROM: 'cdn' },
      /NGINX_REAL_IP_FROM: must be a comma-separated list of IP addresses or CIDR ranges/,
    ],
    [{ DEPLOY_DIST_DIR: 'relative/dist' }, /DEPLOY_DIST_DIR: must be an absolute path/],
    [{ ORIGIN_URL: 'ftp://x' }, /ORIGIN_URL: must be an http/],
  ];
  for (const [env, message] of refusals) assert.throws(() => readConfig(env), message);
  assert.equal(readConfig({ NGINX_ORIGINS: '10.0.0.5:3000, [::1]:3001', DIST_DIR: '/srv/d' }).deploy.origins, [
    '10.0.0.5:3000',
    '[::1]:3001',
  ]);
  assert.is(readConfig({ DIST_DIR: '/srv/d' }).deploy.distDir, undefined, 'the build then names files where they are');
  assert.is(readConfig({ DEPLOY_DIST_DIR: '/srv/depot/dist' }).deploy.distDir, '/srv/depot/dist');
});
nginx.run();

// Issue 27: file names the character rule allows but nginx reads as syntax. `$host` and `$nope` are
// variables inside add_header (one expands to the request's Host, the other fails nginx -t); quotes,
// braces, semicolons and spaces end or split a directive unless quoted.
const HOSTILE_NAMES = [
  'Plugin $host.jar',
  'Evil $nope ${x} $$.jar',
  'Quoted "name" \'single\' {braces}; semi.jar',
  'back `tick` #hash ~ %24host & more.jar',
];
const names = suite('nginx.conf and export-static: file names with $, quotes, braces and semicolons');
const named = {} as {
  workspace: Workspace;
  treeDir: string;
  manifest: Manifest;
  ids: Map<string, string>;
  port: number;
  originPort: number;
};
names.before(async () => {
  named.workspace = await makeWorkspace({ build: false });
  named.ids = new Map();
  for (const [index, fileName] of HOSTILE_NAMES.entries()) {
    const bytes = pluginJar(`hostile-name-${index}`);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const id = `plugin-${1_800_000_000_000 + index}-${sha256.slice(0, 12)}`;
    const at = new Date(1_800_000_000_000 + index * 1000).toISOString();
    await writeFile(join(named.workspace.dataDir, 'jars', `${id}.jar`), bytes);
    const record = {
      id,
      serverSoftware: ['Quilt'],
      pluginVersion: `9.0.${index}`,
      javaVersion: '21',
      proxyVersion: null,
    };
    const fields = { fileName, fileSize: bytes.length, sha256, createdAt: at, updatedAt: at, createdBy: 'test' };
    await writeFile(join(named.workspace.dataDir, 'versions', `${id}.json`), JSON.stringify({ ...record, ...fields }));
    named.ids.set(fileName, id);
  }
  [named.port, named.originPort] = [await freePort(), await freePort()];
  await runBuild({
    dataDir: named.workspace.dataDir,
    distDir: named.workspace.distDir,
    cacheDir: SHARED_BUILD_CACHE,
    deploy: { ...DEFAULT_DEPLOY, listen: `127.0.0.1:${named.port}`, origins: [`127.0.0.1:${named.originPort}`] },
  });
  named.treeDir = (await currentTreeDir(named.workspace.distDir))!;
  named.manifest = Manifest.parse(JSON.parse(await readFile(join(named.treeDir, 'manifest.json'), 'utf8')));
});
names.after(() => named.workspace.remove());

names('nginx -t accepts the nginx.conf the build wrote', async () => {
  await assertNginxAccepts(await readFile(join(named.treeDir, 'nginx.conf'), 'utf8'));
});
names(
  "nginx sends each download's Content-Disposition as the origin does: the exact name, nothing expanded",
  async () => {
    if (!NGINX) return console.warn('nginx not installed: not run');
    // The origin behind it, as deployed; downloads are answered from their files (routeLocation).
    const origin = await startTestOrigin(named.workspace, { port: named.originPort });
    const nginx = await startNginx(NGINX, join(named.treeDir, 'nginx.conf'), named.port);
    try {
      for (const [fileName, id] of named.ids) {
        const path = `/api/plugin-versions/download/${id}`;
        const response = await fetch(nginx.url + path, { signal: AbortSignal.timeout(10_000) });
        await response.arrayBuffer();
        assert.is(response.status, 200, path);
        const disposition = response.headers.get('content-disposition')!;
        assert.is(disposition, named.manifest.routes[path]!.headers['content-disposition'], fileName);
        assert.is(parseDisposition(disposition).parameters.filename, fileName);
      }
      assert.not.match(await nginx.errors(), /\[(emerg|alert|crit)\]/);
    } finally {
      await nginx.stop();
      await origin.close();
    }
  },
);
names(
  "export-static's _headers: one line per header, no file name; each download's name is left to the origin",
  async () => {
    // No static host can carry a header per path with a fixed number of rules: Content-Disposition
    // (the JAR's file name) is the origin's and nginx's alone (above), listed as not carried.
    const exportDir = join(named.workspace.dir, 'public');
    const exported = await runDepot(['export-static', exportDir], named.workspace);
    assert.is(exported.code, 0, exported.stderr);
    const text = await readFile(join(exportDir, '_headers'), 'utf8');
    for (const line of text.split('\n').filter((l) => l && !l.startsWith('#')))
      assert.match(line, /^(\/\S*|  [A-Z][A-Za-z-]*: [^\u0000-\u001f]+)$/, 'one rule or one header per line');
    assert.not.match(text, /content-disposition/i);
    const configs = staticLayoutConfigs(named.manifest.routes, 'http://localhost:3000');
    assert.ok(configs.notCarried.get('/api/plugin-versions/download/{id}')?.has('content-disposition'));
    assert.match(
      await readFile(join(ROOT, 'docs/deployment.md'), 'utf8').then((text) => text.replace(/\s+/g, ' ')),
      /a JAR's Content-Disposition \(its file name\)/,
    );
    const host = await startStaticHost(exportDir, 'cloudflare');
    try {
      for (const [fileName, id] of named.ids) {
        assert.not.ok(text.includes(fileName), fileName);
        const path = `/api/plugin-versions/download/${id}`;
        const answer = await rawRequest(`${host.url}${path}`);
        assert.is(answer.status, 200, path);
        assert.ok(answer.body.equals(await readFile(join(named.treeDir, named.manifest.routes[path]!.file))), path);
      }
    } finally {
      await host.close();
    }
  },
);
names.run();
