import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createApi } from '../server/app.ts';
import { CACHE_CONTROL } from '../server/http/cache.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { SERVER_SOFTWARE, findSoftware } from '../server/versions/software.ts';
import { JAVA_VERSIONS } from '../server/versions/java.ts';
import { BRAND_NAMES, COMMON_SIZES, findBrand, findVariant, variantsOf } from '../server/brands/brands.ts';
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

/**
 * The brand, variant and file a brand image's path names, on its three routes (the query form and
 * the two static links): the brand first (404 listing all six), then the link's file name (404
 * naming the path and the form expected), then a size past 2048 (400), then the variant (404 listing
 * the brand's own).
 */
const anyCase = (word: string) =>
  fc
    .array(fc.boolean(), { minLength: word.length, maxLength: word.length })
    .map((upper) => [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
const brandSegment = fc.oneof(fc.constantFrom(...BRAND_NAMES).chain(anyCase), fc.stringMatching(/^[a-z0-9-]{1,10}$/));
const variantWord = fc.oneof(
  fc.constantFrom('default', 'light', 'dark', 'none', 'white', 'blue', 'blue-no-text'),
  fc.stringMatching(/^[a-z-]{1,8}$/),
);
const extension = fc.oneof(
  fc.constantFrom('png', 'webp', 'jpg', 'gif', 'svg').chain(anyCase),
  fc.constantFrom('bmp', ''),
);
const sizeWord = fc.oneof(
  fc.constantFrom(...COMMON_SIZES.map(String)),
  fc.constantFrom('0', '2049', '4096', '99999', '1.5', 'big', '064'),
);
type BrandRoute = { kind: 'query' | 'sized' | 'variant'; brand: string; variant: string; file: string; query: string };
const brandRoute = fc.record({
  kind: fc.constantFrom<BrandRoute['kind']>('query', 'sized', 'variant'),
  brand: brandSegment,
  variant: variantWord.chain(anyCase),
  file: fc.oneof(
    fc.tuple(fc.oneof(sizeWord, variantWord), extension).map(([stem, ext]) => `${stem}.${ext}`),
    // Not a dot segment: the URL would be another path.
    fc.stringMatching(/^[a-z0-9.]{1,8}$/).filter((word) => word !== '.' && word !== '..'),
  ),
  query: fc.constantFrom('', '?size=64', '?size=0', '?format=bmp'),
});

function brandPath(route: BrandRoute): string {
  if (route.kind === 'query') return `/api/image/brand/${route.brand}${route.query}`;
  if (route.kind === 'sized') return `/brand/${route.brand}/${route.variant}/${route.file}`;
  return `/brand/${route.brand}/${route.file}`;
}

const images = suite('route parameters that name a brand, its variant and an image file');
images.before(async () => {
  ctx.workspace = await makeWorkspace();
  // The built tree's routes stay, so the common sizes are read from files, not rendered.
  const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  const api = createApi({ ...liveContext(tree), tree: () => tree });
  ctx.request = async (path) => api.request(path);
});
images.after(() => ctx.workspace.remove());

images('the brand first, then the file name, then the size, then the variant, on the three image routes', async () => {
  await fc.assert(
    fc.asyncProperty(brandRoute, async (route) => {
      const path = brandPath(route);
      const answer = await ctx.request(path);
      const body = answer.headers.get('content-type')?.startsWith('application/json')
        ? (JSON.parse(await answer.text()) as {
            error?: string;
            availableBrands?: string[];
            availableVariants?: string[];
          })
        : {};
      const brand = findBrand(route.brand);
      if (!brand) {
        assert.is(answer.status, 404, path);
        assert.is(
          body.error,
          `Unknown brand ${JSON.stringify(route.brand)}; available: ${BRAND_NAMES.join(', ')}`,
          path,
        );
        assert.equal(body.availableBrands, BRAND_NAMES, path);
        return;
      }
      if (route.kind === 'query') {
        assert.is(answer.status, route.query === '' || route.query === '?size=64' ? 200 : 400, path);
        return;
      }
      const file = route.file.toLowerCase();
      const form =
        route.kind === 'sized' ? /^[1-9]\d{0,3}\.(png|webp|jpg|gif|svg)$/ : /^[a-z-]+\.(png|webp|jpg|gif|svg)$/;
      if (!form.test(file)) {
        assert.is(answer.status, 404, path);
        const expected = route.kind === 'sized' ? 'expected <size>.' : 'expected <variant>.';
        assert.ok(body.error?.startsWith(`No image at ${new URL(path, 'http://x').pathname}: ${expected}`), path);
        return;
      }
      const [stem, format] = file.split('.') as [string, string];
      if (route.kind === 'sized' && Number(stem) > 2048) {
        assert.is(answer.status, 400, path);
        assert.is(body.error, 'size must be an integer from 1 to 2048', path);
        return;
      }
      const variant = route.kind === 'sized' ? route.variant.toLowerCase() : stem;
      if (!findVariant(brand, variant)) {
        assert.is(answer.status, 404, path);
        assert.equal(body.availableVariants, variantsOf(brand), path);
        return;
      }
      const svgOfPng = format === 'svg' && brand !== 'leafmc';
      assert.is(answer.status, svgOfPng ? 400 : 200, path);
    }),
    { numRuns: 300 },
  );
});

images.run();
