import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  addPaperVersion,
  makeWorkspace,
  pluginJar,
  rawRequest,
  runDepot,
  serveBuiltTree,
  type ServedTree,
  type Workspace,
} from './helpers.ts';
import { startStaticHost } from './static-host.ts';

// Issue 39, item 1: Java 25 answers on every path that takes a Java, as the other four do: from the
// origin, from nginx in front of it with the build's nginx.conf, and from a static host's export.

const test = suite('Java 25 on every path that takes a Java');
const ctx = {} as {
  workspace: Workspace;
  served: ServedTree;
  exportDir: string;
  host: { url: string; close: () => Promise<void> };
};

test.before(async () => {
  ctx.workspace = await makeWorkspace({ build: false, site: true });
  await addPaperVersion(ctx.workspace.dataDir, '9.0.0', pluginJar('9.0.0', ['PaperMC']), {
    serverSoftware: ['PaperMC', 'Purpur'],
    javaVersion: '25',
  });
  ctx.served = await serveBuiltTree(ctx.workspace);
  ctx.exportDir = join(await mkdtemp(join(tmpdir(), 'depot-java25-export-')), 'site');
  const exported = await runDepot(['export-static', ctx.exportDir], ctx.workspace);
  assert.is(exported.code, 0, exported.stderr);
  ctx.host = await startStaticHost(ctx.exportDir, 'netlify');
});

test.after(async () => {
  await ctx.host?.close();
  await ctx.served?.stop();
  if (ctx.exportDir) await rm(join(ctx.exportDir, '..'), { recursive: true, force: true });
  await ctx.workspace?.remove();
});

/** Each path, its status and what its body shows. */
const PATHS: [path: string, check: (body: Buffer) => void][] = [
  ['/api/plugin-versions/latest/papermc/25', (body) => assert.is(json(body).version.pluginVersion, '9.0.0')],
  ['/api/plugin-versions/latest/purpur/25', (body) => assert.is(json(body).version.javaVersion, '25')],
  ['/api/plugin-versions/latest/papermc', (body) => assert.is(json(body).version.pluginVersion, '9.0.0')],
  ['/api/plugin-versions/latest/papermc/25.txt', (body) => assert.is(body.toString().trim(), '9.0.0')],
  ['/api/plugin-versions/download/latest/papermc/25', (body) => assert.is(body.subarray(0, 2).toString(), 'PK')],
  [
    '/api/plugin-versions/resolve/purpur/25',
    (body) => assert.equal(json(body).resolvedFrom, { software: 'Purpur', java: '25' }),
  ],
  ['/api/plugin-versions/download/resolve/leafmc/25', (body) => assert.is(body.subarray(0, 2).toString(), 'PK')],
  ['/api/plugin-versions/update-check/papermc/25/8.0.0', (body) => assert.is(json(body).status, 'outdated')],
  ['/versions/papermc/25', (body) => assert.match(body.toString(), /9\.0\.0/)],
];

for (const [path, check] of PATHS)
  test(`${path}: origin, nginx and the static export answer it`, async () => {
    const answers = [
      ['origin', await rawRequest(`${ctx.served.origin.url}${path}`)],
      ['nginx', ctx.served.nginx ? await rawRequest(`${ctx.served.nginx.url}${path}`) : undefined],
    ] as const;
    for (const [who, answer] of answers) {
      if (!answer) continue;
      assert.is(answer.status, 200, `${who} ${path}`);
      check(answer.body);
    }
    // A static host has no query forms and no live routes; what the tree precomputes, it serves.
    if (!path.startsWith('/api/plugin-versions/update-check/')) {
      const fromHost = await rawRequest(`${ctx.host.url}${path}`);
      assert.is(fromHost.status, 200, `static host ${path}`);
      check(fromHost.body);
    }
  });

test('Java 21 servers are never offered the Java 25 build', async () => {
  const answer = await rawRequest(`${ctx.served.origin.url}/api/plugin-versions/latest/papermc/21`);
  assert.is(answer.status, 200);
  assert.is.not(json(answer.body).version.javaVersion, '25');
  const resolved = json((await rawRequest(`${ctx.served.origin.url}/api/plugin-versions/resolve/papermc/21`)).body);
  assert.is.not(resolved.version.pluginVersion, '9.0.0');
});

for (const java of ['9', '16', '22', '26'])
  test(`Java ${java}, which the depot does not list: a JSON 404 naming the five it does`, async () => {
    for (const url of [ctx.served.origin.url, ctx.served.nginx?.url].filter(Boolean)) {
      const answer = await rawRequest(`${url}/api/plugin-versions/latest/papermc/${java}`);
      assert.is(answer.status, 404);
      assert.is(json(answer.body).error, `Unknown Java version "${java}"; expected one of 8, 11, 17, 21, 25`);
    }
  });

test.run();

function json(body: Buffer) {
  return JSON.parse(body.toString()) as Record<string, any>;
}
