import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import { PRECOMPUTED_UPDATE_CHECKS, listVersionPaths } from '../build/paths.ts';
import { createCatalog } from '../server/versions/catalog.ts';
import * as assert from 'uvu/assert';
import { createApi } from '../server/app.ts';
import { countsWhenPrecomputed } from '../server/endpoints.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { currentTreeDir, openTree, type Tree } from '../server/tree/open.ts';
import type { Channel } from '../server/versions/channels.ts';
import type { PluginVersionRecord } from '../server/versions/schema.ts';
import { checkForUpdate, type UpdateStatus } from '../server/versions/update-check.ts';
import { liveContext, makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

const pure = suite('checkForUpdate');

function record(id: string, pluginVersion: string, channel?: Channel): PluginVersionRecord {
  return {
    id: `plugin-1-${id}`,
    serverSoftware: ['PaperMC'],
    pluginVersion,
    javaVersion: '21',
    fileName: `${id}.jar`,
    fileSize: 1,
    sha256: '0'.repeat(64),
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    createdBy: 'alice',
    ...(channel ? { channel } : {}),
  };
}
const VERSIONS = [
  record('a', '1.0.0'),
  record('b', '1.1.0'),
  record('b2', '1.1.0'), // the same version again (another build): counted once
  record('c', '1.2.0'),
  { ...record('j17', '1.1.5'), javaVersion: '17' as const }, // issue 31: Java is a minimum, counted on 21
  { ...record('folia', '1.1.7'), serverSoftware: ['Folia' as const] }, // issue 31: Paper's last fallback, counted
  { ...record('velocity', '1.1.8'), serverSoftware: ['Velocity' as const] }, // another software: not counted
  record('beta', '1.3.0-beta.1', 'beta'),
];
const latestRelease = VERSIONS[3]!;
const latestBeta = VERSIONS[7]!;
const pureCases: [string, Channel, PluginVersionRecord, UpdateStatus, number | null][] = [
  ['1.2.0', 'release', latestRelease, 'latest', 0],
  ['1.2.0+build.7', 'release', latestRelease, 'latest', 0], // build metadata does not order versions
  ['1.1.0', 'release', latestRelease, 'outdated', 3], // 1.1.5, 1.1.7, 1.2.0
  ['1.0.0', 'release', latestRelease, 'outdated', 4],
  ['0.9.0', 'release', latestRelease, 'outdated', 5],
  ['1.2.0-rc.1', 'release', latestRelease, 'outdated', 1], // a pre-release comes before its release
  ['1.2.1-SNAPSHOT', 'release', latestRelease, 'ahead', 0], // a dev build the depot never saw
  ['1.3.0-beta.1', 'release', latestRelease, 'ahead', 0],
  ['1.3.0-beta.1', 'beta', latestBeta, 'latest', 0],
  ['1.1.0', 'beta', latestBeta, 'outdated', 4], // 1.1.5, 1.1.7, 1.2.0 and the beta
  ['dev', 'release', latestRelease, 'unknown', null],
  ['1.2', 'release', latestRelease, 'unknown', null],
  ['v1.2.0', 'release', latestRelease, 'unknown', null],
  ['=1.2.0', 'release', latestRelease, 'unknown', null],
  [' 1.2.0', 'release', latestRelease, 'unknown', null],
  ['', 'release', latestRelease, 'unknown', null],
];
for (const [current, channel, latest, status, behind] of pureCases) {
  pure(
    `${JSON.stringify(current)} on ${channel} (latest ${latest.pluginVersion}) -> ${status}, behind ${behind}`,
    () => {
      assert.equal(checkForUpdate(VERSIONS, { software: 'PaperMC', java: '21', channel, current, latest }), {
        status,
        behind,
      });
    },
  );
}
pure.run();

type Answer = { status: UpdateStatus; current: string; latest: { id: string; pluginVersion: string }; behind: number };
const ctx = {} as { workspace: Workspace; origin: RunningOrigin; tree: Tree };
const get = (path: string) => fetch(ctx.origin.url + path);
const CHECK = '/api/plugin-versions/update-check';

const http = suite('GET /api/plugin-versions/update-check/:software/:java/:current');
http.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await startTestOrigin(ctx.workspace);
  ctx.tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
});
http.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});

// path -> status, behind, the latest version's pluginVersion
const httpCases: [string, UpdateStatus, number | null, string][] = [
  // Issue 31: Java is a minimum and the chain is resolve's: Java 21 is offered 1.4.0 (Java 17).
  [`${CHECK}/papermc/21/1.3.0`, 'outdated', 1, '1.4.0'],
  [`${CHECK}/papermc/21/1.2.0`, 'outdated', 2, '1.4.0'], // 1.3.0 and 1.4.0
  [`${CHECK}/papermc/17/1.0.0`, 'outdated', 5, '1.4.0'], // 1.0.1 and 1.3.0 (Spigot), 1.1.0, 1.2.0, 1.4.0
  [`${CHECK}/spigot/8/1.0.0`, 'outdated', 1, '1.0.1'],
  [`${CHECK}/PaperMC/17/1.4.0`, 'latest', 0, '1.4.0'], // another letter case: answered live
  [`${CHECK}/papermc/17/1.4.1-SNAPSHOT`, 'ahead', 0, '1.4.0'], // a dev build: live
  [`${CHECK}/papermc/17/dev`, 'unknown', null, '1.4.0'],
  [`${CHECK}/papermc/17/1.4.0+git.5f0c1e2`, 'latest', 0, '1.4.0'], // build metadata does not order versions
  [`${CHECK}/papermc/17/v1.4.0`, 'unknown', null, '1.4.0'],
  [`${CHECK}/leafmc/21/1.5.0-beta.1`, 'ahead', 0, '1.3.0'], // the beta, checking the release channel
  [`${CHECK}/leafmc/21/1.5.0-beta.1?channel=beta`, 'latest', 0, '1.5.0-beta.1'],
  [`${CHECK}/leafmc/21/1.3.0?channel=beta`, 'outdated', 2, '1.5.0-beta.1'], // 1.4.0 (PaperMC's) and the beta
  [`${CHECK}/leafmc/21/1.3.0?channel=alpha`, 'outdated', 2, '1.5.0-beta.1'],
  [`${CHECK}/leafmc/21/1.3.0?channel=release`, 'latest', 0, '1.3.0'],
];
for (const [path, status, behind, latest] of httpCases) {
  http(`${path} -> ${status}`, async () => {
    const response = await get(path);
    assert.is(response.status, 200);
    assert.is(response.headers.get('cache-control'), 'public, max-age=60');
    assert.match(response.headers.get('etag')!, /^"[^"]+"$/);
    assert.is(response.headers.get('access-control-allow-origin'), '*');
    const answer = (await response.json()) as Answer;
    // Issue 31: resolvedFrom always; newerElsewhere when a newer build is held back.
    assert.equal(Object.keys(answer).slice(0, 5), ['status', 'current', 'latest', 'behind', 'resolvedFrom']);
    assert.is(answer.status, status);
    assert.is(answer.behind, behind);
    assert.is(answer.current, decodeURIComponent(path.split('/').at(-1)!.split('?')[0]!));
    assert.is(answer.latest.pluginVersion, latest);
  });
}

http('latest is the version object the latest endpoint answers', async () => {
  const check = (await (await get(`${CHECK}/leafmc/21/1.0.0?channel=beta`)).json()) as Answer;
  const latest = (await (await get('/api/plugin-versions/latest/leafmc/21?channel=beta')).json()) as {
    version: unknown;
  };
  assert.equal(check.latest, latest.version);
});

const errorCases: [string, number, string][] = [
  // Issue 31: resolve's 404, naming what would resolve.
  [
    `${CHECK}/canvasmc/8/1.0.0`,
    404,
    // CanvasMC on Java 11 runs 1.1.0, a PaperMC build whose JAR declares folia-supported (issue 31).
    'No build for CanvasMC on Java 8; available for Java 11: 1.1.0; for Java 17: 1.2.0; for Java 21: 1.3.0',
  ],
  [
    `${CHECK}/quilt/17/1.0.0?channel=beta`,
    404,
    'No build for Quilt on Java 17 in the beta channel; available for Java 21: 1.3.0',
  ],
  [`${CHECK}/papermc/16/1.0.0`, 404, 'Unknown Java version "16"; expected one of 8, 11, 17, 21, 25'],
  [`${CHECK}/papermc/21/1.0.0?channel=nightly`, 400, 'channel must be one of release, beta, alpha'],
  [`${CHECK}/papermc/21/${'1'.repeat(65)}`, 400, 'current must be a version of at most 64 characters'],
];
for (const [path, status, error] of errorCases) {
  http(`${status} ${path.slice(0, 90)}`, async () => {
    const response = await get(path);
    assert.is(response.status, status);
    assert.equal(await response.json(), { error });
  });
}
http('404 for an unknown software names the valid ones', async () => {
  const response = await get(`${CHECK}/forge/21/1.0.0`);
  assert.is(response.status, 404);
  assert.match(
    ((await response.json()) as { error: string }).error,
    /^Unknown server software "forge"; expected one of/,
  );
});

http(
  'the newest versions of each software and Java version are precomputed files, in each channel; every answer equals the live one',
  async () => {
    const context = liveContext(ctx.tree);
    const live = createApi(context);
    const versions = ctx.tree.catalog.versions;
    let checked = 0;
    for (const version of versions) {
      for (const software of version.serverSoftware) {
        for (const query of ['', '?channel=release', '?channel=beta', '?channel=alpha']) {
          const path = `${CHECK}/${software.toLowerCase()}/${version.javaVersion}/${version.pluginVersion}${query}`;
          const group = versions.filter(
            (v) => v.serverSoftware.includes(software) && v.javaVersion === version.javaVersion,
          );
          const newer = new Set(group.slice(0, group.indexOf(version) + 1).map((v) => v.pluginVersion));
          const entry = ctx.tree.routes.get(path);
          assert.is(
            entry !== undefined,
            newer.size <= PRECOMPUTED_UPDATE_CHECKS,
            `${path}: precomputed when among the newest`,
          );
          const rendered = await live.request(path, { headers: { 'accept-encoding': 'identity' } });
          const bytes = Buffer.from(await rendered.arrayBuffer());
          if (entry) {
            assert.is(rendered.status, entry.status, path);
            assert.ok(bytes.equals(await readFile(join(ctx.tree.dir, entry.file))), `${path}: precomputed == live`);
          }
          // Over HTTP, a letter case the tree does not hold is answered live, with the same bytes.
          const served = await get(path.replace(`/${software.toLowerCase()}/`, `/${software.toUpperCase()}/`));
          assert.ok(Buffer.from(await served.arrayBuffer()).equals(bytes), `${path}: served live == rendered`);
          // The origin compresses a larger answer (issue 31's newerElsewhere), naming the encoding in its ETag.
          if (entry) assert.is(served.headers.get('etag')?.replace(/-gzip"$/, '"'), entry.headers.etag ?? null);
          checked++;
        }
      }
    }
    assert.ok(checked >= versions.length * 4, `${checked} answers checked`);
  },
);
http(
  `only the newest ${PRECOMPUTED_UPDATE_CHECKS} plugin versions of a software and Java version are precomputed`,
  () => {
    const record = ctx.tree.catalog.versions.find((v) => v.serverSoftware.includes('Velocity'))!;
    // Eight Velocity releases for Java 21, newest first, beside the demo data.
    const releases = Array.from({ length: 8 }, (_, i) => ({
      ...record,
      id: `plugin-${1800000000000 - i}-velocity${i}`,
      serverSoftware: ['Velocity' as const],
      javaVersion: '21' as const,
      pluginVersion: `9.0.${7 - i}`,
      createdAt: new Date(1800000000000 - i * 1000).toISOString(),
    }));
    const catalog = createCatalog([...releases, ...ctx.tree.catalog.versions], [...ctx.tree.catalog.users.values()]);
    const checks = listVersionPaths(catalog).filter(
      (p) => p.startsWith(`${CHECK}/velocity/21/9.0.`) && !p.includes('?'),
    );
    assert.equal(
      checks.sort(),
      ['9.0.3', '9.0.4', '9.0.5', '9.0.6', '9.0.7'].map((v) => `${CHECK}/velocity/21/${v}`),
    );
  },
);
http.run();

const limited = suite('update check: rate limited like the other metadata endpoints');
limited.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await startTestOrigin(ctx.workspace, { rateLimit: { limit: 3, windowSeconds: 900 } });
});
limited.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});

limited('precomputed and live answers count; the fourth request is a 429; nginx limits the files too', async () => {
  const paths = [`${CHECK}/papermc/21/1.3.0`, `${CHECK}/papermc/21/1.3.1-SNAPSHOT`, `${CHECK}/velocity/21/1.3.0`];
  for (const [i, path] of paths.entries()) {
    const response = await get(path);
    assert.is(response.status, 200, path);
    assert.is(response.headers.get('ratelimit-policy'), '"default";q=3;w=900');
    assert.is(response.headers.get('x-ratelimit-remaining'), String(2 - i));
    await response.arrayBuffer();
  }
  const over = await get(`${CHECK}/papermc/21/1.3.0`);
  assert.is(over.status, 429);
  assert.match(((await over.json()) as { error: string }).error, /^Rate limit of 3 requests per 900 seconds exceeded/);
  assert.ok(countsWhenPrecomputed(`${CHECK}/papermc/21/1.3.0`));
});
limited.run();
