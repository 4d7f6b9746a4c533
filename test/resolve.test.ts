import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createApi } from '../server/app.ts';
import { currentTreeDir, openTree, type Tree } from '../server/tree/open.ts';
import { CHANNELS, type Channel } from '../server/versions/channels.ts';
import { createCatalog, loadCatalog, type Catalog } from '../server/versions/catalog.ts';
import { RUNS_PLUGINS_OF } from '../server/versions/compat.ts';
import { describeMinecraft, parseMinecraftList, supportsMinecraft } from '../server/versions/minecraft.ts';
import { explainNoBuild, resolveBuild } from '../server/versions/resolve.ts';
import { PluginVersionRecord, type CatalogVersion } from '../server/versions/schema.ts';
import { catalogVersion } from '../server/versions/catalog-version.ts';
import { SERVER_SOFTWARE, type ServerSoftware } from '../server/versions/software.ts';
import { JAVA_VERSIONS, type JavaVersion } from '../server/versions/java.ts';
import { checkAnswer } from './openapi-conformance.ts';
import { ROOT, allRoutes, liveContext, makeWorkspace, type Workspace } from './helpers.ts';

// The demo data's versions, by the letter the tables below use (createdAt order).
const DEMO = {
  A: 'plugin-1768035600000-f8d161e085', // 1.0.0 Java 8, Spigot+Bukkit, MC 1.8.8
  B: 'plugin-1768035900000-7e709249d7', // 1.0.0 Java 8, BungeeCord+Waterfall
  C: 'plugin-1768910400000-7df86bd75d', // 1.0.1 Java 8, Spigot, MC 1.12.2
  D: 'plugin-1771065000000-6f003c62f0', // 1.1.0 Java 11, PaperMC+Spigot+Bukkit, MC 1.16.5
  E: 'plugin-1774080000000-767405b112', // 1.2.0 Java 17, PaperMC+Folia+Purpur, MC 1.20.4
  F: 'plugin-1774080600000-a5c3e0687b', // 1.2.0 Java 17, Velocity
  G: 'plugin-1780412400000-b878942086', // 1.3.0 Java 21, PaperMC+Folia+Purpur, MC 1.21.4
  H: 'plugin-1780412700000-cdd49d17d1', // 1.3.0 Java 17, Spigot+Bukkit, MC 1.20.6
  I: 'plugin-1780413000000-28db67d578', // 1.3.0 Java 21, Velocity
  J: 'plugin-1780413300000-f1ded09995', // 1.3.0 Java 11, BungeeCord+Waterfall
  K: 'plugin-1780413600000-af86d0a868', // 1.3.0 Java 21, Quilt+LeafMC, MC 1.21.4
  L: 'plugin-1780413900000-a53d5a0a9e', // 1.3.0 Java 21, CanvasMC, MC 1.21.4
  M: 'plugin-1789470000000-7f26410443', // 1.4.0 Java 17, PaperMC+Purpur, MC 1.21.1
  N: 'plugin-1793385900000-fbf68fcdf0', // 1.5.0-beta.1 (beta) Java 21, LeafMC, MC 1.21.10
  O: 'plugin-1795514400000-cd8206ff60', // 2.0.0 Java 25, PaperMC+Folia+Purpur, MC 26.1-26.1.1 (issue 39)
} as const;
type Letter = keyof typeof DEMO;

/**
 * The release channel's answer per software, for [any Java, 8, 11, 17, 21, 25]: `letter` when the
 * software's own build wins, `letter/Software` when a fallback does, `-` for a 404.
 */
const RELEASE_TABLE: Record<ServerSoftware, [string, string, string, string, string, string]> = {
  PaperMC: ['O', 'C/Spigot', 'D', 'M', 'M', 'O'], // Java 21 gets the newer Java 17 build
  Spigot: ['H', 'C', 'D', 'H', 'H', 'H'],
  Bukkit: ['H', 'A', 'D', 'H', 'H', 'H'],
  Purpur: ['O', 'C/Spigot', 'D/PaperMC', 'M', 'M', 'O'], // Purpur -> PaperMC -> Spigot
  Quilt: ['K', '-', '-', '-', 'K', 'K'],
  LeafMC: ['K', 'C/Spigot', 'D/PaperMC', 'M/PaperMC', 'K', 'K'], // a native build beats a newer compatible one
  // Issue 31: its own builds, then one whose JAR declares folia-supported (D and M do), whatever its software.
  Folia: ['O', '-', 'D/PaperMC', 'E', 'G', 'O'],
  CanvasMC: ['L', '-', 'D/PaperMC', 'E/Folia', 'L', 'L'],
  BungeeCord: ['J', 'B', 'J', 'J', 'J', 'J'],
  Waterfall: ['J', 'B', 'J', 'J', 'J', 'J'], // the BungeeCord+Waterfall builds, matched as Waterfall
  Velocity: ['I', '-', '-', 'F', 'I', 'I'],
};
/** beta and alpha differ only where the LeafMC beta (Java 21) is shown. */
const LESS_STABLE: Partial<Record<ServerSoftware, [string, string, string, string, string, string]>> = {
  LeafMC: ['N', 'C/Spigot', 'D/PaperMC', 'M/PaperMC', 'N', 'N'],
};

const demo = {} as { catalog: Catalog };
const table = suite('resolveBuild: every software x Java x channel on the demo data');
table.before(async () => {
  demo.catalog = await loadCatalog(join(ROOT, 'data'));
});
for (const channel of CHANNELS) {
  for (const software of SERVER_SOFTWARE) {
    const row = (channel === 'release' ? undefined : LESS_STABLE[software]) ?? RELEASE_TABLE[software];
    table(`${software} in ${channel}: ${row.join(' ')}`, () => {
      [undefined, ...JAVA_VERSIONS].forEach((java, column) => {
        const found = resolveBuild(demo.catalog.versions, { software, java, channel });
        const [letter, from = software] = row[column]!.split('/');
        const where = `${software} Java ${java ?? 'any'} ${channel}`;
        if (letter === '-') return assert.is(found, undefined, where);
        assert.is(found?.version.id, DEMO[letter as Letter], where);
        assert.is(found?.software, from, where);
      });
    });
  }
}
table('the answer always runs on the server: its Java at most the asked one, its software in the chain', () => {
  for (const channel of CHANNELS)
    for (const software of SERVER_SOFTWARE)
      for (const java of JAVA_VERSIONS) {
        const found = resolveBuild(demo.catalog.versions, { software, java, channel });
        if (!found) continue;
        assert.ok(Number(found.version.javaVersion) <= Number(java), `${software} ${java}`);
        const declared = found.version.foliaSupported === true && ['Folia', 'CanvasMC'].includes(software);
        assert.ok(RUNS_PLUGINS_OF[software].includes(found.software) || declared, `${software} ${java}`);
        assert.ok(found.version.serverSoftware.includes(found.software));
      }
});
table('Folia, Velocity, Bukkit and Quilt run only their own builds; Waterfall falls back to BungeeCord only', () => {
  for (const software of ['Folia', 'Velocity', 'Bukkit', 'Quilt'] as const)
    assert.equal(RUNS_PLUGINS_OF[software], [software]);
  assert.equal(RUNS_PLUGINS_OF.Waterfall, ['Waterfall', 'BungeeCord']);
  // Issue 31: Folia's builds are Paper's and its forks' last fallback.
  assert.equal(RUNS_PLUGINS_OF.Purpur, ['Purpur', 'PaperMC', 'Spigot', 'Bukkit', 'Folia']);
  for (const [software, chain] of Object.entries(RUNS_PLUGINS_OF)) assert.is(chain[0], software);
});
table.run();

function record(id: string, fields: Partial<PluginVersionRecord>): CatalogVersion {
  const parsed = PluginVersionRecord.parse({
    id: `plugin-1-${id}`,
    serverSoftware: ['PaperMC'],
    pluginVersion: '1.0.0',
    javaVersion: '17',
    fileName: `${id}.jar`,
    fileSize: 1,
    sha256: '0'.repeat(64),
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    createdBy: 'alice',
    ...fields,
  });
  return catalogVersion(parsed, '0'.repeat(128));
}

const minecraft = suite('Minecraft versions: ranges, lists and the filter');
const rangeCases: [string, string[], string[]][] = [
  ['1.20.6-1.21.4', ['1.20.6', '1.21', '1.21.0', '1.21.1', '1.21.4'], ['1.20.4', '1.20', '1.21.5', '1.22']],
  ['1.21.x', ['1.21', '1.21.1', '1.21.10'], ['1.20.6', '1.22', '1.2.1']],
  ['1.20.6,1.21.1', ['1.20.6', '1.21.1'], ['1.21', '1.21.0', '1.20.5', '1.21.4']],
  ['1.8.8-1.12.2', ['1.8.8', '1.9', '1.10.2', '1.12.2'], ['1.8.7', '1.12.3', '1.16.5']],
];
for (const [text, inside, outside] of rangeCases) {
  minecraft(`--minecraft ${text}: runs on ${inside.join(', ')}; not on ${outside.join(', ')}`, () => {
    const ranges = parseMinecraftList(text);
    assert.ok(Array.isArray(ranges), String(ranges));
    for (const asked of inside) assert.ok(supportsMinecraft({ minecraftVersions: ranges as never }, asked), asked);
    for (const asked of outside) assert.not.ok(supportsMinecraft({ minecraftVersions: ranges as never }, asked), asked);
  });
}
minecraft('a record without minecraftVersions means exactly its minecraftVersion; without either, any', () => {
  assert.ok(supportsMinecraft({ minecraftVersion: '1.21' }, '1.21.0'));
  assert.ok(supportsMinecraft({ minecraftVersion: '1.21.4' }, '1.21.4'));
  assert.not.ok(supportsMinecraft({ minecraftVersion: '1.21.4' }, '1.21.1'));
  assert.not.ok(supportsMinecraft({ minecraftVersion: '24w14a' }, '1.21'));
  assert.ok(supportsMinecraft({}, '1.8.8'));
});
minecraft('a record whose minecraftVersion is not the highest of its ranges is refused', () => {
  const ranges = [{ from: '1.20.6', to: '1.21.4' }];
  assert.ok(record('ok', { minecraftVersion: '1.21.4', minecraftVersions: ranges }));
  assert.throws(
    () => record('low', { minecraftVersion: '1.20.6', minecraftVersions: ranges }),
    /the highest of minecraftVersions/,
  );
  assert.throws(() => record('none', { minecraftVersions: ranges }), /minecraftVersion/);
  assert.throws(() =>
    record('back', { minecraftVersion: '1.20.6', minecraftVersions: [{ from: '1.21.4', to: '1.20.6' }] }),
  );
  assert.is(
    describeMinecraft({ minecraftVersion: '1.21.4', minecraftVersions: [...ranges, { from: '1.19', to: '1.19.x' }] }),
    '1.20.6-1.21.4, 1.19.x',
  );
});
minecraft('resolve keeps the builds inside the range: the newest in range wins, else a fallback, else none', () => {
  const versions = createCatalog(
    [
      record('wide', { minecraftVersion: '1.21.4', minecraftVersions: [{ from: '1.20.6', to: '1.21.4' }] }),
      record('new', { minecraftVersion: '1.21.4', createdAt: '2026-02-01T00:00:00.000Z' }),
      record('spigot', { serverSoftware: ['Spigot'], minecraftVersion: '1.20.4', javaVersion: '8' }),
    ],
    [],
  ).versions;
  const pick = (software: ServerSoftware, minecraft?: string, java?: JavaVersion) =>
    resolveBuild(versions, { software, minecraft, java, channel: 'release' })?.version.id.slice(9);
  assert.is(pick('PaperMC'), 'new');
  assert.is(pick('PaperMC', '1.21.4'), 'new');
  assert.is(pick('PaperMC', '1.21.1'), 'wide');
  assert.is(pick('Purpur', '1.20.4'), 'spigot');
  assert.is(pick('PaperMC', '1.20.4', '11'), 'spigot');
  assert.is(pick('PaperMC', '1.19'), undefined);
});
minecraft('a BungeeCord-only build serves Waterfall, matched as BungeeCord; never Velocity', () => {
  const versions = createCatalog(
    [
      record('bungee', { serverSoftware: ['BungeeCord'], javaVersion: '11' }),
      record('waterfall', { serverSoftware: ['Waterfall'], javaVersion: '21', createdAt: '2025-01-01T00:00:00.000Z' }),
    ],
    [],
  ).versions;
  const pick = (software: ServerSoftware, java?: JavaVersion) =>
    resolveBuild(versions, { software, java, channel: 'release' });
  assert.equal([pick('Waterfall')?.version.id, pick('Waterfall')?.software], ['plugin-1-waterfall', 'Waterfall']);
  assert.equal(
    [pick('Waterfall', '17')?.version.id, pick('Waterfall', '17')?.software],
    ['plugin-1-bungee', 'BungeeCord'],
  );
  assert.is(pick('BungeeCord')?.version.id, 'plugin-1-bungee');
  assert.is(pick('Velocity'), undefined);
});
minecraft('demo data: the filter applies to fallbacks too, and proxies state no game version', () => {
  const pick = (software: ServerSoftware, minecraft: string, java?: JavaVersion) =>
    resolveBuild(demo.catalog.versions, { software, minecraft, java, channel: 'release' });
  assert.is(pick('PaperMC', '1.21.4')?.version.id, DEMO.G);
  assert.is(pick('PaperMC', '1.21.1')?.version.id, DEMO.M);
  assert.is(pick('Purpur', '1.20.6')?.version.id, DEMO.H);
  assert.is(pick('Purpur', '1.20.6')?.software, 'Spigot');
  assert.is(pick('Waterfall', '1.21.4')?.version.id, DEMO.J);
  assert.is(pick('Folia', '1.20.6'), undefined);
  assert.is(pick('PaperMC', '1.21.4', '17'), undefined);
});
minecraft.run();

const explain = suite('explainNoBuild: what would resolve if the server changed one thing');
const explainCases: [ServerSoftware, JavaVersion | undefined, string | undefined, Channel, string][] = [
  // Folia on Java 11 runs 1.1.0, a PaperMC build whose JAR declares folia-supported (issue 31).
  [
    'Folia',
    '8',
    undefined,
    'release',
    'No build for Folia on Java 8; available for Java 11: 1.1.0; for Java 17: 1.2.0; for Java 21: 1.3.0; for Java 25: 2.0.0',
  ],
  ['Quilt', '17', undefined, 'release', 'No build for Quilt on Java 17; available for Java 21: 1.3.0'],
  [
    'PaperMC',
    '17',
    '1.21.4',
    'release',
    'No build for PaperMC on Java 17 for Minecraft 1.21.4; available for Java 21: 1.3.0; for Minecraft 1.21.1: 1.4.0',
  ],
  [
    'LeafMC',
    undefined,
    '1.21.10',
    'release',
    'No build for LeafMC for Minecraft 1.21.10; available for Minecraft 1.21.4: 1.3.0; in the beta channel: 1.5.0-beta.1',
  ],
  [
    'Folia',
    undefined,
    '1.20.6',
    'beta',
    'No build for Folia for Minecraft 1.20.6 in the beta channel; available for Minecraft 26.1-26.1.1: 2.0.0',
  ],
  [
    'Velocity',
    '8',
    undefined,
    'release',
    'No build for Velocity on Java 8; available for Java 17: 1.2.0; for Java 21: 1.3.0',
  ],
];
for (const [software, java, minecraftVersion, channel, message] of explainCases) {
  explain(message, () => {
    assert.is(resolveBuild(demo.catalog.versions, { software, java, minecraft: minecraftVersion, channel }), undefined);
    assert.is(explainNoBuild(demo.catalog.versions, { software, java, minecraft: minecraftVersion, channel }), message);
  });
}
explain.before(async () => {
  demo.catalog ??= await loadCatalog(join(ROOT, 'data'));
});
explain.run();

const http = suite('the resolve endpoints over the built demo tree');
const ctx = {} as { workspace: Workspace; tree: Tree; api: ReturnType<typeof createApi> };
http.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  ctx.api = createApi(liveContext(ctx.tree));
});
http.after(() => ctx.workspace.remove());

const getJson = async (path: string) => {
  const answer = await ctx.api.request(path);
  // Each answer as the OpenAPI document describes it (status, headers, body schema).
  await checkAnswer('GET', `http://127.0.0.1${path}`, answer.clone());
  return { status: answer.status, body: (await answer.json()) as any, headers: answer.headers };
};

http("the answer is the latest endpoint's version object plus resolvedFrom", async () => {
  const resolved = await getJson('/api/plugin-versions/resolve/purpur/11');
  assert.is(resolved.status, 200);
  assert.equal(resolved.body.resolvedFrom, { software: 'PaperMC', java: '11' });
  const latest = await getJson('/api/plugin-versions/latest/papermc/11');
  assert.equal(resolved.body.version, latest.body.version);
  assert.equal(Object.keys(resolved.body).sort(), ['resolvedFrom', 'version']);
  const native = await getJson('/api/plugin-versions/resolve/Purpur');
  assert.equal(native.body.resolvedFrom, { software: 'Purpur', java: '25' });
  assert.is(native.body.version.id, DEMO.O);
});

http('404s say what would resolve; bad parameters name the parameter and the allowed values', async () => {
  const cases: [string, number, string][] = [
    [
      '/api/plugin-versions/resolve/folia/8',
      404,
      'No build for Folia on Java 8; available for Java 11: 1.1.0; for Java 17: 1.2.0; for Java 21: 1.3.0; for Java 25: 2.0.0',
    ],
    [
      '/api/plugin-versions/download/resolve/folia/8',
      404,
      'No build for Folia on Java 8; available for Java 11: 1.1.0; for Java 17: 1.2.0; for Java 21: 1.3.0; for Java 25: 2.0.0',
    ],
    ['/api/plugin-versions/resolve/forge', 404, 'Unknown server software "forge"; expected one of PaperMC, Spigot'],
    ['/api/plugin-versions/resolve/papermc/16', 404, 'Unknown Java version "16"; expected one of 8, 11, 17, 21, 25'],
    ['/api/plugin-versions/resolve/papermc?channel=nightly', 400, 'channel must be one of release, beta, alpha'],
    [
      '/api/plugin-versions/resolve/papermc?minecraft=1.21.x',
      400,
      'minecraft must be a Minecraft version such as 1.21.4',
    ],
    ['/api/plugin-versions/download/resolve/papermc/21?minecraft=latest', 400, 'minecraft must be a Minecraft version'],
    ['/api/plugin-versions?minecraft=1.21-pre1', 400, 'minecraft must be a Minecraft version'],
  ];
  for (const [path, status, message] of cases) {
    const answer = await getJson(path);
    assert.is(answer.status, status, path);
    assert.ok(answer.body.error.startsWith(message), `${path}: ${answer.body.error}`);
  }
});

http('the list filters by ?minecraft=: ranges, exact versions, and proxy builds that state none', async () => {
  const ids = async (query: string) =>
    (await getJson(`/api/plugin-versions${query}`)).body.versions.map((v: { id: string }) => v.id);
  assert.equal(await ids('?minecraft=1.21.4'), [DEMO.L, DEMO.K, DEMO.J, DEMO.I, DEMO.G, DEMO.F, DEMO.B]);
  assert.equal(await ids('?minecraft=1.8.8'), [DEMO.J, DEMO.I, DEMO.F, DEMO.B, DEMO.A]);
  assert.is((await ids('')).length, 15);
});

http("the download variant streams the JAR of the build resolve names, with download/latest's headers", async () => {
  for (const [software, java, id] of [
    ['purpur', '8', DEMO.C],
    ['waterfall', '', DEMO.J],
    ['canvasmc', '17', DEMO.E],
    ['leafmc', '21', DEMO.K],
  ] as const) {
    const path = `/api/plugin-versions/download/resolve/${software}${java ? `/${java}` : ''}`;
    const answer = await ctx.api.request(path);
    assert.is(answer.status, 200, path);
    const bytes = Buffer.from(await answer.arrayBuffer());
    assert.ok(bytes.equals(await readFile(join(ROOT, 'data/jars', `${id}.jar`))), `${path}: bytes`);
    const byId = await ctx.api.request(`/api/plugin-versions/download/${id}`);
    for (const name of ['content-type', 'content-disposition', 'etag', 'content-length', 'accept-ranges'])
      assert.is(answer.headers.get(name), byId.headers.get(name), `${path}: ${name}`);
    assert.is(answer.headers.get('cache-control'), 'public, max-age=60');
  }
});

http(
  'every software x Java x (channel or Minecraft) form is precomputed, and each file equals its live answer',
  async () => {
    const resolveRoutes = [...allRoutes(ctx.tree.routes)].filter(
      ([path]) =>
        /^\/api\/plugin-versions\/(download\/)?resolve\//.test(path) || path.startsWith('/api/plugin-versions?'),
    );
    // 11 softwares x 6 Java forms (any, 8, 11, 17, 21, 25) x (no query + 3 channels + 10 named Minecraft versions) x 2 kinds, and the 10 lists.
    assert.is(resolveRoutes.length, 11 * 6 * (1 + 3 + 10) * 2 + 10);
    for (const path of [
      '/api/plugin-versions/resolve/purpur',
      '/api/plugin-versions/resolve/folia/8',
      '/api/plugin-versions/download/resolve/leafmc/21?minecraft=1.21.10',
      '/api/plugin-versions/download/resolve/leafmc/21?channel=beta',
      '/api/plugin-versions/resolve/papermc/17?minecraft=1.20.4',
      '/api/plugin-versions/resolve/velocity?channel=alpha',
      '/api/plugin-versions?minecraft=1.21.4',
    ])
      assert.ok(ctx.tree.routes.has(path), path);
    let notFound = 0;
    for (const [path, entry] of resolveRoutes) {
      const live = await ctx.api.request(path, { headers: { 'accept-encoding': 'identity' } });
      const bytes = Buffer.from(await live.arrayBuffer());
      assert.is(live.status, entry.status, path);
      assert.ok(bytes.equals(await readFile(join(ctx.tree.dir, entry.file))), `${path}: bytes differ`);
      for (const name of ['content-type', 'etag', 'cache-control', 'content-disposition'])
        assert.is(live.headers.get(name) ?? undefined, entry.headers[name], `${path}: ${name}`);
      if (entry.status === 404) notFound++;
    }
    assert.ok(notFound > 100, `${notFound} precomputed 404s`);
  },
);
http.run();
