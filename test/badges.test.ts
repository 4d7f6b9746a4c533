import { DOMParser } from '@xmldom/xmldom';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { BUILD_RECORD, BuildRecord, readPreviousTree, reusedAnswers } from '../server/tree/previous.ts';
import { createApi } from '../server/app.ts';
import { SVG_SECURITY_POLICY } from '../server/http/cache.ts';
import type { RequestLog } from '../server/http/request-log.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { createFileStorage, type Storage } from '../server/storage.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import { JAVA_VERSIONS } from '../server/versions/java.ts';
import {
  SHARED_BUILD_CACHE,
  addPaperVersion,
  findProgram,
  freePort,
  liveContext,
  makeAccounts,
  makeWorkspace,
  pluginJar,
  startNginx,
  startTestOrigin,
  until,
  type Accounts,
  type NginxServer,
  type Workspace,
} from './helpers.ts';

// Issue 17 item 2: badges drawn by badge-maker, read back as SVG, PNG and endpoint JSON over HTTP.

const ctx = {} as { workspace: Workspace; storage: Storage; accounts: Accounts; origin: RunningOrigin };

const get = (path: string, init?: RequestInit) => fetch(ctx.origin.url + path, init);

/** What the badge says: its visible texts (badge-maker draws each twice, shadow and text) and its title. */
async function readSvg(path: string) {
  const response = await get(path);
  assert.is(response.status, 200, path);
  assert.is(response.headers.get('content-type'), 'image/svg+xml', path);
  const svg = new DOMParser().parseFromString(await response.text(), 'image/svg+xml').documentElement!;
  assert.is(svg.nodeName, 'svg', path);
  const texts = Array.from(svg.getElementsByTagName('text'))
    .filter((text) => text.getAttribute('aria-hidden') !== 'true')
    .map((text) => text.textContent);
  return {
    texts,
    title: svg.getElementsByTagName('title')[0]?.textContent,
    width: Number(svg.getAttribute('width')),
    height: Number(svg.getAttribute('height')),
    cacheControl: response.headers.get('cache-control'),
  };
}

const badges = suite('badges');
badges.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.accounts = await makeAccounts(ctx.workspace);
  ctx.storage = createFileStorage(ctx.workspace.storageDir);
  ctx.origin = await startTestOrigin(ctx.workspace, { storage: ctx.storage });
});
badges.after(async () => {
  await ctx.origin.close();
  await ctx.storage.dispose();
  await ctx.workspace.remove();
});

badges('latest version per software and per software x Java: SVG label and message, cached as charts', async () => {
  const latest = (await (await get('/api/plugin-versions/latest/papermc')).json()) as {
    version: { pluginVersion: string };
  };
  const badge = await readSvg('/api/badges/latest/papermc.svg');
  assert.equal(badge.texts, ['PaperMC', `v${latest.version.pluginVersion}`]);
  assert.is(badge.title, `PaperMC: v${latest.version.pluginVersion}`);
  assert.is(badge.height, 20);
  assert.is(badge.cacheControl, 'public, max-age=300');
  const java = (await (await get('/api/plugin-versions/latest/velocity/17')).json()) as {
    version: { pluginVersion: string };
  };
  assert.equal((await readSvg('/api/badges/latest/Velocity/17.svg')).texts, [
    'Velocity Java 17',
    `v${java.version.pluginVersion}`,
  ]);
});

badges('endpoint JSON is what shields.io reads, saying what the SVG says', async () => {
  const response = await get('/api/badges/latest/papermc.json');
  assert.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  const json = (await response.json()) as Record<string, unknown>;
  assert.equal(Object.keys(json).sort(), ['color', 'label', 'message', 'schemaVersion']);
  assert.is(json.schemaVersion, 1);
  assert.equal([json.label, json.message], (await readSvg('/api/badges/latest/papermc.svg')).texts);
  assert.is(json.color, 'blue');
});

badges('PNG: the same badge at twice its size, decoded by sharp', async () => {
  const svg = await readSvg('/api/badges/latest/papermc.svg');
  const response = await get('/api/badges/latest/papermc.png');
  assert.is(response.headers.get('content-type'), 'image/png');
  const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
  assert.is(meta.format, 'png');
  assert.equal([meta.width, meta.height], [svg.width * 2, svg.height * 2]);
});

badges('style is shields.io style; a bad style, format or software names what is allowed', async () => {
  const flat = await readSvg('/api/badges/latest/papermc.svg');
  const large = await readSvg('/api/badges/latest/papermc.svg?style=for-the-badge');
  assert.is(large.height, 28);
  assert.ok(large.width > flat.width);
  const bad = await get('/api/badges/latest/papermc.svg?style=round');
  assert.is(bad.status, 400);
  assert.match(((await bad.json()) as { error: string }).error, /^style must be one of flat, flat-square/);
  const format = await get('/api/badges/latest/papermc.gif');
  assert.is(format.status, 404);
  assert.match(((await format.json()) as { error: string }).error, /one of svg, png, json/);
  assert.is((await get('/api/badges/latest/minestom.svg')).status, 404);
  assert.is((await get('/api/badges/latest/papermc/12.svg')).status, 404);
});

badges('total downloads: the count the origin keeps, as shields.io writes numbers', async () => {
  assert.equal((await readSvg('/api/badges/downloads.svg')).texts, ['downloads', '0']);
  const versions = (await (await get('/api/plugin-versions')).json()) as { versions: { id: string }[] };
  const jar = await get(`/api/plugin-versions/download/${versions.versions[0]!.id}`);
  await jar.arrayBuffer();
  await until(
    async () => ((await (await get('/api/badges/downloads.json')).json()) as { message: string }).message === '1',
    'the download counted on the badge',
    10_000,
  );
  assert.equal((await readSvg('/api/badges/downloads.svg')).texts, ['downloads', '1']);
});

badges('players online now for a public server; private servers have none', async () => {
  const { publicServer, privateServer } = ctx.accounts;
  assert.equal((await readSvg(`/api/badges/players/${publicServer.id}.svg`)).texts, ['players', 'no recent data']);
  const ingest = await get(`/api/servers/${publicServer.id}/stats`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${publicServer.ingestKey}` },
    body: JSON.stringify({ players: 12 }),
  });
  assert.is(ingest.status, 204);
  assert.equal((await readSvg(`/api/badges/players/${publicServer.id}.svg`)).texts, ['players', '12 online']);
  const json = (await (await get(`/api/badges/players/${publicServer.id}.json`)).json()) as { color: string };
  assert.is(json.color, 'brightgreen');
  assert.is((await get(`/api/badges/players/${privateServer.id}.svg`)).status, 403);
  assert.is((await get('/api/badges/players/00000000-0000-4000-8000-000000000000.svg')).status, 404);
  assert.is((await get('/api/badges/players/not-a-uuid.svg')).status, 400);
});

badges(
  'badges are not rate limited: a client past its limit still gets every one, without RateLimit fields',
  async () => {
    const limited = await startTestOrigin(ctx.workspace, {
      storage: ctx.storage,
      rateLimit: { limit: 2, windowSeconds: 900 },
    });
    try {
      const metadata = () => fetch(`${limited.url}/api/plugin-versions/latest/papermc`).then((r) => r.status);
      assert.equal([await metadata(), await metadata(), await metadata()], [200, 200, 429]);
      const { publicServer } = ctx.accounts;
      for (const path of [
        '/api/badges/latest/papermc.svg',
        '/api/badges/latest/papermc/21.png',
        '/api/badges/downloads.json',
        `/api/badges/players/${publicServer.id}.svg`,
      ]) {
        const answer = await fetch(limited.url + path);
        await answer.arrayBuffer();
        assert.is(answer.status, 200, path);
        assert.is(answer.headers.get('ratelimit'), null, path);
      }
      assert.is(await metadata(), 429);
    } finally {
      await limited.close();
    }
  },
);

badges.run();

// Latest badges are precomputed into the tree (served by the origin's static edge, nginx and static
// hosts); PNGs, other styles and channels stay live.

const NGINX = findProgram('nginx');
const built = {} as {
  workspace: Workspace;
  origin: RunningOrigin;
  nginx: NginxServer | undefined;
  deploy: Parameters<typeof runBuild>[0]['deploy'];
  logs: RequestLog[];
};

const currentTree = async () => openTree((await currentTreeDir(built.workspace.distDir))!);

/** Every latest badge path the tree could hold: each software, with and without each Java version, SVG and JSON. */
const LATEST_BADGES = SERVER_SOFTWARE.flatMap((software) =>
  [undefined, ...JAVA_VERSIONS].flatMap((java) =>
    ['svg', 'json'].map(
      (format) => `/api/badges/latest/${software.toLowerCase()}${java === undefined ? '' : `/${java}`}.${format}`,
    ),
  ),
);

/** The answers the origin logged since `from`: path (log lines leave the query out) and where from. */
const loggedSince = (from: number) => built.logs.slice(from).map((entry) => `${entry.path} ${entry.cache ?? 'live'}`);

const fileOf = async (path: string) => {
  const tree = await currentTree();
  return readFile(join(tree.dir, tree.routes.get(path)!.file));
};

const precomputed = suite('badges: latest badges precomputed');
precomputed.before(async () => {
  built.workspace = await makeWorkspace({ build: false });
  const [originPort, nginxPort] = [await freePort(), await freePort()];
  built.deploy = {
    origins: [`127.0.0.1:${originPort}`],
    listen: `127.0.0.1:${nginxPort}`,
    realIpFrom: [],
    originUrl: `http://127.0.0.1:${originPort}`,
  };
  const { dataDir, distDir } = built.workspace;
  await runBuild({ dataDir, distDir, cacheDir: SHARED_BUILD_CACHE, site: false, deploy: built.deploy });
  built.logs = [];
  built.origin = await startTestOrigin(built.workspace, { port: originPort, log: (entry) => built.logs.push(entry) });
  if (NGINX) built.nginx = await startNginx(NGINX, join(distDir, 'current/nginx.conf'), nginxPort);
});
precomputed.after(async () => {
  await built.nginx?.stop();
  await built.origin.close();
  await built.workspace.remove();
});

precomputed(
  'the tree holds the latest badges exactly where the live route answers 200, same bytes and headers',
  async () => {
    const tree = await currentTree();
    const live = createApi(liveContext(tree));
    let held = 0;
    let missing = 0;
    for (const path of LATEST_BADGES) {
      const answer = await live.request(path, { headers: { 'accept-encoding': 'identity' } });
      const entry = tree.routes.get(path);
      assert.is(entry !== undefined, answer.status === 200, `${path}: in the tree iff the live route answers 200`);
      if (!entry) {
        assert.is(answer.status, 404, path);
        missing++;
        continue;
      }
      held++;
      const bytes = Buffer.from(await answer.arrayBuffer());
      assert.ok(bytes.equals(await readFile(join(tree.dir, entry.file))), `${path}: bytes differ`);
      for (const name of ['content-type', 'cache-control', 'content-security-policy', 'etag', 'vary'])
        assert.is(entry.headers[name], answer.headers.get(name) ?? undefined, `${path}: ${name}`);
    }
    assert.ok(held >= 2 * SERVER_SOFTWARE.length, `${held} badges precomputed`);
    assert.ok(missing > 0, 'the demo data has software x Java combinations without a version, left to the live 404');
    const badgePaths = [...tree.routes.paths()].filter((path) => path.startsWith('/api/badges/'));
    assert.is(badgePaths.length, held, 'no PNG, query form, downloads or players badge in the tree');
  },
);

precomputed('the origin answers them from the tree; PNG, styles and channels are drawn live', async () => {
  const get = (path: string, init?: RequestInit) => fetch(built.origin.url + path, init);
  const identity = { 'accept-encoding': 'identity' };
  const from = built.logs.length;
  for (const [path, type] of [
    ['/api/badges/latest/papermc.svg', 'image/svg+xml'],
    ['/api/badges/latest/velocity/17.json', 'application/json; charset=utf-8'],
  ] as const) {
    const response = await get(path, { headers: identity });
    assert.is(response.status, 200, path);
    assert.is(response.headers.get('content-type'), type, path);
    assert.is(response.headers.get('cache-control'), 'public, max-age=300', path);
    if (type === 'image/svg+xml') assert.is(response.headers.get('content-security-policy'), SVG_SECURITY_POLICY);
    assert.ok(Buffer.from(await response.arrayBuffer()).equals(await fileOf(path)), path);
    const etag = response.headers.get('etag')!;
    const revalidated = await get(path, { headers: { ...identity, 'if-none-match': etag } });
    assert.is(revalidated.status, 304, `${path}: revalidated from the tree`);
  }
  await until(() => loggedSince(from).length === 4, 'the answers logged');
  assert.equal(loggedSince(from), [
    '/api/badges/latest/papermc.svg static',
    '/api/badges/latest/papermc.svg static',
    '/api/badges/latest/velocity/17.json static',
    '/api/badges/latest/velocity/17.json static',
  ]);

  const flat = (await fileOf('/api/badges/latest/papermc.svg')).toString();
  const plastic = await get('/api/badges/latest/papermc.svg?style=plastic');
  assert.is(plastic.status, 200);
  assert.is.not(await plastic.text(), flat, 'the plastic style is drawn');
  const beta = await get('/api/badges/latest/papermc.svg?channel=beta');
  assert.is(beta.status, 200);
  await beta.arrayBuffer();
  const png = await get('/api/badges/latest/papermc.png');
  assert.is(png.headers.get('content-type'), 'image/png');
  await png.arrayBuffer();
  await until(() => loggedSince(from).length === 7, 'the answers logged');
  assert.equal(loggedSince(from).slice(4), [
    '/api/badges/latest/papermc.svg live',
    '/api/badges/latest/papermc.svg live',
    '/api/badges/latest/papermc.png live',
  ]);
  const tree = await currentTree();
  const absent = LATEST_BADGES.find((path) => !tree.routes.has(path))!;
  const notFound = await get(absent);
  assert.is(notFound.status, 404, absent);
  assert.match(((await notFound.json()) as { error: string }).error, /^No plugin version found for /);
});

precomputed(
  'nginx serves the precomputed badges from files with the origin headers; the rest from the origin',
  async () => {
    if (!built.nginx) {
      console.warn('badges.test.ts: nginx not installed, the nginx badge test not run (apt-get install -y nginx)');
      return;
    }
    const tree = await currentTree();
    const from = built.logs.length;
    for (const path of ['/api/badges/latest/papermc.svg', '/api/badges/latest/papermc.json']) {
      const entry = tree.routes.get(path)!;
      const file = await readFile(join(tree.dir, entry.file));
      const response = await fetch(built.nginx.url + path, { headers: { 'accept-encoding': 'identity' } });
      assert.is(response.status, 200, path);
      for (const name of ['content-type', 'cache-control', 'content-security-policy', 'etag', 'vary'])
        assert.is(response.headers.get(name) ?? undefined, entry.headers[name], `${path}: ${name}`);
      assert.ok(Buffer.from(await response.arrayBuffer()).equals(file), path);
      // A badge's SVG has its br file beside it; its endpoint JSON is too small to be worth one.
      const coding = entry.encodings?.includes('br') ? 'br' : null;
      assert.is(coding === 'br', path.endsWith('.svg'), path);
      const compressed = await fetch(built.nginx.url + path, { headers: { 'accept-encoding': 'br' } });
      assert.is(compressed.headers.get('content-encoding'), coding, `${path}: the br file beside it, if any`);
      assert.ok(Buffer.from(await compressed.arrayBuffer()).equals(file), path);
    }
    const plastic = await fetch(`${built.nginx.url}/api/badges/latest/papermc.svg?style=plastic`);
    assert.is(plastic.status, 200);
    await plastic.arrayBuffer();
    await until(() => loggedSince(from).length > 0, 'nginx sent the styled badge to the origin');
    assert.equal(
      loggedSince(from),
      ['/api/badges/latest/papermc.svg live'],
      'only the styled badge reached the origin',
    );
  },
);

precomputed('a release asks again only the badges of the softwares whose versions it changes', async () => {
  const before = await currentTree();
  const { dataDir, distDir } = built.workspace;
  await addPaperVersion(dataDir, '6.0.0', pluginJar('6.0.0'));
  await runBuild({ dataDir, distDir, cacheDir: SHARED_BUILD_CACHE, site: false, deploy: built.deploy });
  const after = await currentTree();
  assert.is.not(after.dir, before.dir);
  // The reuse rule the release's build applied, asked again of the tree it started from.
  const record = BuildRecord.parse(JSON.parse(await readFile(join(before.dir, BUILD_RECORD), 'utf8')));
  const previous = (await readPreviousTree(before.dir, record.code, {
    catalog: after.catalog,
    brands: [...after.brands.values()],
  }))!;
  const reused = await reusedAnswers(previous, LATEST_BADGES, after.catalog);
  const kept = (paths: string[]) => paths.filter((path) => reused.has(path));
  const badges = LATEST_BADGES.filter((path) => before.routes.has(path));
  const papermc = badges.filter((path) => /\/papermc(\/21)?\.\w+$/.test(path));
  assert.is(papermc.length, 4);
  assert.equal(kept(papermc), [], 'the PaperMC and PaperMC Java 21 badges are drawn again');
  const proxies = badges.filter((path) => /\/(velocity|bungeecord|waterfall)[/.]/.test(path));
  assert.ok(proxies.length > 0);
  assert.equal(kept(proxies), proxies, 'the proxies share no version with PaperMC: their badges are kept');
  assert.ok(kept(badges).length > badges.length / 2, `most badges kept (${kept(badges).length} of ${badges.length})`);

  const expected = { schemaVersion: 1, label: 'PaperMC Java 21', message: 'v6.0.0', color: 'blue' };
  const entry = after.routes.get('/api/badges/latest/papermc/21.json')!;
  assert.equal(JSON.parse(await readFile(join(after.dir, entry.file), 'utf8')), expected);
  const served = async () => (await fetch(`${built.origin.url}/api/badges/latest/papermc/21.json`)).text();
  await until(async () => (await served()) === JSON.stringify(expected), 'the origin serves the release');
});

precomputed.run();
