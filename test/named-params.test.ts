import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createApi } from '../server/app.ts';
import { CACHE_CONTROL } from '../server/http/cache.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { JAVA_VERSIONS, SERVER_SOFTWARE, findSoftware } from '../server/versions/software.ts';
import { liveContext, makeWorkspace, type Workspace } from './helpers.ts';

/**
 * The software and Java version a path names, on every route that names them (latest, download
 * latest, resolve, download resolve, update check, feed, latest badge): whatever the route, the
 * query is checked first (400), then the software, then the Java version (404 naming what exists,
 * cached as a miss), and only then is a version looked for.
 */

type Route = { name: string; path: (software: string, java: string | undefined) => string; java: boolean };
const API = '/api/plugin-versions';
const ROUTES: Route[] = [
  { name: 'latest', path: (s, j) => `${API}/latest/${s}${j === undefined ? '' : `/${j}`}`, java: true },
  {
    name: 'download latest',
    path: (s, j) => `${API}/download/latest/${s}${j === undefined ? '' : `/${j}`}`,
    java: true,
  },
  { name: 'resolve', path: (s, j) => `${API}/resolve/${s}${j === undefined ? '' : `/${j}`}`, java: true },
  {
    name: 'download resolve',
    path: (s, j) => `${API}/download/resolve/${s}${j === undefined ? '' : `/${j}`}`,
    java: true,
  },
  { name: 'update check', path: (s, j) => `${API}/update-check/${s}/${j ?? '21'}/1.0.0`, java: true },
  { name: 'feed', path: (s) => `${API}/feed/${s}.atom`, java: false },
  { name: 'latest badge', path: (s, j) => `/api/badges/latest/${s}${j === undefined ? '' : `/${j}`}.json`, java: true },
];

/** A path segment: a software name in any letter case, or a word that names none. */
const softwareSegment = fc.oneof(
  fc
    .tuple(fc.constantFrom(...SERVER_SOFTWARE), fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }))
    .map(([name, upper]) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join('')),
  fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/),
);
const javaSegment = fc.oneof(fc.constantFrom(...JAVA_VERSIONS), fc.stringMatching(/^[A-Za-z0-9_-]{1,6}$/));
const channel = fc.option(fc.constantFrom('release', 'beta', 'alpha', 'nightly', ''), { nil: undefined });

const ctx = {} as { workspace: Workspace; request: (path: string) => Promise<Response> };
const named = suite('route parameters that name a software and a Java version');
named.before(async () => {
  ctx.workspace = await makeWorkspace();
  const api = createApi(liveContext(await openTree((await currentTreeDir(ctx.workspace.distDir))!)));
  ctx.request = async (path) => api.request(path);
});
named.after(() => ctx.workspace.remove());

named('the query first, then the software, then the Java version, on every route that names them', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...ROUTES),
      softwareSegment,
      fc.option(javaSegment, { nil: undefined }),
      channel,
      async (route, software, rawJava, channelValue) => {
        const java = route.java ? rawJava : undefined;
        const query = channelValue === undefined || route.name === 'feed' ? '' : `?channel=${channelValue}`;
        const path = route.path(software, java) + query;
        const answer = await ctx.request(path);
        const text = await answer.text();
        const error = answer.headers.get('content-type')?.startsWith('application/json')
          ? (JSON.parse(text) as { error?: string }).error
          : undefined;
        if (query !== '' && !['release', 'beta', 'alpha'].includes(channelValue!)) {
          assert.is(answer.status, 400, path);
          assert.match(error ?? '', /^channel must be one of release, beta, alpha/, path);
          return;
        }
        const checkJava = java ?? (route.name === 'update check' ? '21' : undefined);
        if (!findSoftware(software)) {
          assert.is(answer.status, 404, path);
          assert.is(
            error,
            `Unknown server software ${JSON.stringify(software)}; expected one of ${SERVER_SOFTWARE.join(', ')}`,
            path,
          );
          assert.is(answer.headers.get('cache-control'), CACHE_CONTROL.notFound, path);
        } else if (checkJava !== undefined && !(JAVA_VERSIONS as readonly string[]).includes(checkJava)) {
          assert.is(answer.status, 404, path);
          assert.is(
            error,
            `Unknown Java version ${JSON.stringify(checkJava)}; expected one of ${JAVA_VERSIONS.join(', ')}`,
            path,
          );
          assert.is(answer.headers.get('cache-control'), CACHE_CONTROL.notFound, path);
        } else {
          assert.ok(answer.status === 200 || answer.status === 404, `${path}: ${answer.status}`);
          if (answer.status === 404) {
            assert.not.match(error ?? '', /^Unknown /, path);
            assert.is(answer.headers.get('cache-control'), CACHE_CONTROL.notFound, path);
          }
        }
      },
    ),
    { numRuns: 300 },
  );
});

named('an update check names a too long current version before anything else', async () => {
  for (const software of ['papermc', 'forge']) {
    const answer = await ctx.request(`${API}/update-check/${software}/16/${'1'.repeat(65)}?channel=nightly`);
    assert.is(answer.status, 400);
    assert.is(((await answer.json()) as { error: string }).error, 'current must be a version of at most 64 characters');
  }
});

named.run();
