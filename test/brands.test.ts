import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { createApi } from '../server/app.ts';
import { createByteCache } from '../server/byte-cache.ts';
import { loadBrandSources } from '../server/brands/sources.ts';
import { createMemoryStorage } from '../server/storage.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { currentTreeDir, openTree, type Tree } from '../server/tree/open.ts';
import { assertRefusesData, liveContext, makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

const ctx = {} as { workspace: Workspace; origin: RunningOrigin; tree: Tree };
const get = (path: string, init?: RequestInit) => fetch(ctx.origin.url + path, init);
async function setup() {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await startTestOrigin(ctx.workspace);
  ctx.tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
}
async function teardown() {
  await ctx.origin.close();
  await ctx.workspace.remove();
}
const ALL_BRANDS = ['papermc', 'velocity', 'folia', 'canvasmc', 'leafmc', 'purpurmc'];

const list = suite('GET /api/image/brand');
list.before(setup);
list.after(teardown);
list('lists brands and variants in SPEC 2.8 order, exactly', async () => {
  const response = await get('/api/image/brand');
  assert.is(response.status, 200);
  assert.is(
    await response.text(),
    JSON.stringify({
      brands: {
        papermc: ['light', 'dark', 'none', 'default'],
        velocity: ['white', 'blue', 'blue-no-text', 'white-no-text', 'default'],
        folia: ['default'],
        canvasmc: ['default'],
        leafmc: ['default'],
        purpurmc: ['default'],
      },
    }),
  );
});
list.run();

const images = suite('GET /api/image/brand/:brand: decoded outputs');
images.before(setup);
images.after(teardown);

// brand, variant, aspect (width / height) of its source
const SUBJECTS: [string, string, number][] = [
  ['papermc', 'light', 4], // a wordmark
  ['velocity', 'blue-no-text', 1], // a square mark
  ['leafmc', 'default', 1], // from the SVG
];
const FORMATS: [string, string, boolean][] = [
  ['png', 'png', true],
  ['webp', 'webp', true],
  ['jpg', 'jpeg', false],
  ['gif', 'gif', true],
];
for (const [brand, variant, aspect] of SUBJECTS) {
  for (const [format, decoded, alpha] of FORMATS) {
    for (const size of [1, 37, 64, 700, 2048]) {
      if (size === 2048 && format !== 'webp') continue; // one 2048 per subject keeps the suite quick
      images(`${brand} ${variant} ${format} ${size}px`, async () => {
        const response = await get(`/api/image/brand/${brand}?variant=${variant}&size=${size}&format=${format}`);
        assert.is(response.status, 200);
        assert.is(response.headers.get('content-type'), `image/${decoded}`);
        const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
        assert.is(meta.format, decoded);
        assert.is(meta.width, size);
        assert.ok(Math.abs(meta.height! - size / aspect) <= 1, `height ${meta.height} for ${size}/${aspect}`);
        if (size >= 37) assert.is(meta.hasAlpha, alpha, 'alpha');
      });
    }
  }
}

images(
  'originals: the source bytes untouched, 24 h; PNG of the right size; brand and variant in any case',
  async () => {
    const response = await get('/api/image/brand/PaperMC?variant=Light');
    assert.is(response.status, 200);
    assert.is(response.headers.get('cache-control'), 'public, max-age=86400');
    const bytes = Buffer.from(await response.arrayBuffer());
    const source = (await loadBrandSources(ctx.workspace.dataDir)).find(
      (s) => s.brand === 'papermc' && s.variant === 'light',
    )!;
    assert.ok(bytes.equals(Buffer.from(source.bytes)));
    const meta = await sharp(bytes).metadata();
    assert.is(meta.format, 'png');
    assert.ok(meta.width! >= 1024 && meta.hasAlpha);
  },
);

images('default is the same image as papermc none and velocity white', async () => {
  for (const [brand, same] of [
    ['papermc', 'none'],
    ['velocity', 'white'],
  ]) {
    const a = Buffer.from(await (await get(`/api/image/brand/${brand}`)).arrayBuffer());
    const b = Buffer.from(await (await get(`/api/image/brand/${brand}?variant=${same}`)).arrayBuffer());
    assert.ok(a.equals(b), brand);
  }
});

images('leafmc: the SVG itself, scaled as a vector when a size is given, with CSP and nosniff', async () => {
  const original = await get('/api/image/brand/leafmc');
  assert.is(original.headers.get('content-type'), 'image/svg+xml');
  assert.is(original.headers.get('content-security-policy'), "default-src 'none'; style-src 'unsafe-inline'");
  assert.is(original.headers.get('x-content-type-options'), 'nosniff');
  assert.match(await original.text(), /^<svg[^>]*width="512" height="512"/);
  const scaled = await get('/api/image/brand/leafmc?size=1500');
  const svg = await scaled.text();
  const root = /<svg\b[^>]*>/.exec(svg)![0];
  assert.match(root, /width="1500"/);
  assert.match(root, /height="1500"/);
  assert.match(root, /viewBox="0 0 512 512"/);
  assert.is((await sharp(Buffer.from(svg)).metadata()).width, 1500);
});

images('an SVG rasterised at 2048 px is drawn from the vector, not an enlarged bitmap', async () => {
  const fromVector = Buffer.from(await (await get('/api/image/brand/leafmc?size=2048&format=png')).arrayBuffer());
  const small = Buffer.from(await (await get('/api/image/brand/leafmc?format=png')).arrayBuffer());
  const enlarged = await sharp(small).resize({ width: 2048 }).png().toBuffer();
  // Edges of an enlarged bitmap are blurred over many pixels: count partly transparent pixels.
  const softEdge = async (png: Buffer) => {
    const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    let soft = 0;
    for (let i = 3; i < data.length; i += info.channels) if (data[i]! > 0 && data[i]! < 255) soft++;
    return soft;
  };
  const [vector, bitmap] = [await softEdge(fromVector), await softEdge(enlarged)];
  assert.ok(vector * 2 < bitmap, `vector edges ${vector} px vs enlarged ${bitmap} px`);
});

images('JPEG flattens light-text variants onto dark and dark-text ones onto white', async () => {
  const corner = async (query: string) => {
    const bytes = Buffer.from(await (await get(`/api/image/brand/papermc?${query}&format=jpg&size=200`)).arrayBuffer());
    const { data } = await sharp(bytes)
      .extract({ left: 0, top: 0, width: 1, height: 1 })
      .raw()
      .toBuffer({ resolveWithObject: true });
    return [...data];
  };
  const dark = await corner('variant=light');
  const light = await corner('variant=dark');
  assert.ok(
    dark.every((c) => c < 40),
    `light text on ${dark}`,
  );
  assert.ok(
    light.every((c) => c > 240),
    `dark text on ${light}`,
  );
});

const dispositions: [string, string][] = [
  ['?download=true&size=64', 'attachment; filename="papermc-default-64.png"'],
  ['?download=1&variant=dark&format=webp', 'attachment; filename="papermc-dark.webp"'],
  ['?download=false', 'inline; filename="papermc-default.png"'],
  ['?size=16', 'inline; filename="papermc-default-16.png"'],
];
for (const [query, expected] of dispositions) {
  images(`Content-Disposition for ${query}`, async () => {
    const response = await get(`/api/image/brand/papermc${query}`);
    assert.is(response.headers.get('content-disposition'), expected);
    await response.arrayBuffer();
  });
}

images('clean static links and the query form give the same bytes and ETag', async () => {
  for (const [clean, query] of [
    ['/brand/papermc/none/64.png', '/api/image/brand/papermc?variant=none&size=64'],
    ['/brand/velocity/white/1024.gif', '/api/image/brand/velocity?size=1024&format=gif'],
    ['/brand/leafmc/default/48.svg', '/api/image/brand/leafmc?size=48'],
    ['/brand/leafmc/default.png', '/api/image/brand/leafmc?format=png'],
  ]) {
    const [a, b] = await Promise.all([get(clean!), get(query!)]);
    assert.is(a.status, 200, clean);
    assert.is(a.headers.get('etag'), b.headers.get('etag'));
    assert.ok(Buffer.from(await a.arrayBuffer()).equals(Buffer.from(await b.arrayBuffer())), clean);
  }
});

images('static links are case-insensitive in brand, variant and extension, like the query form', async () => {
  for (const [other, clean] of [
    ['/brand/PAPERMC/LIGHT/64.png', '/brand/papermc/light/64.png'],
    ['/brand/PaperMC/Light/64.PNG', '/brand/papermc/light/64.png'],
    ['/brand/velocity/BLUE-NO-TEXT/48.webp', '/brand/velocity/blue-no-text/48.webp'],
    ['/brand/papermc/DARK.png', '/brand/papermc/dark.png'],
    ['/brand/LeafMC/Default.SVG', '/brand/leafmc/default.svg'],
    ['/api/image/brand/PAPERMC?variant=LIGHT&size=64', '/brand/papermc/light/64.png'],
  ]) {
    const [a, b] = await Promise.all([get(other!), get(clean!)]);
    assert.is(a.status, 200, other);
    assert.is(a.headers.get('etag'), b.headers.get('etag'), other);
    assert.is(a.headers.get('content-type'), b.headers.get('content-type'), other);
    assert.ok(Buffer.from(await a.arrayBuffer()).equals(Buffer.from(await b.arrayBuffer())), other);
  }
  assert.is((await get('/brand/papermc/BLUE/64.png')).status, 404);
});

images('If-None-Match gives 304 on precomputed and live answers', async () => {
  for (const path of ['/brand/papermc/none/64.png', '/api/image/brand/papermc?size=333&format=webp']) {
    const etag = (await get(path, { method: 'HEAD' })).headers.get('etag')!;
    assert.match(etag, /^"[0-9a-f]{64}"$/);
    const again = await get(path, { headers: { 'if-none-match': etag } });
    assert.is(again.status, 304, path);
  }
});
images.run();

const errors = suite('brand errors');
errors.before(setup);
errors.after(teardown);
const errorCases: [string, number, RegExp][] = [
  [
    '/api/image/brand/spigot',
    404,
    /^Unknown brand "spigot"; available: papermc, velocity, folia, canvasmc, leafmc, purpurmc$/,
  ],
  [
    '/api/image/brand/papermc?variant=blue',
    404,
    /^Unknown variant "blue" of papermc; available: light, dark, none, default$/,
  ],
  ['/api/image/brand/velocity?variant=none', 404, /available: white, blue, blue-no-text, white-no-text, default/],
  ['/api/image/brand/papermc?size=0', 400, /^size must be an integer from 1 to 2048$/],
  ['/api/image/brand/papermc?size=2049', 400, /^size must be an integer from 1 to 2048$/],
  ['/api/image/brand/papermc?size=1.5', 400, /^size must be an integer from 1 to 2048$/],
  ['/api/image/brand/papermc?size=abc', 400, /^size must be/],
  ['/api/image/brand/papermc?size=', 400, /^size must be/],
  ['/api/image/brand/papermc?size=1&size=2', 400, /^size must be/],
  ['/api/image/brand/papermc?format=bmp', 400, /^format must be one of png, webp, jpg, gif, svg/],
  ['/api/image/brand/papermc?download=yes', 400, /^download must be true, 1, false or 0$/],
  ['/api/image/brand/papermc?format=svg', 400, /^format svg is only available for SVG sources/],
  ['/api/image/brand/papermc?size=0&format=tiff', 400, /^size must be .*; format must be/],
  ['/brand/papermc/none/4096.png', 400, /^size must be an integer from 1 to 2048$/],
  ['/brand/papermc/none/big.png', 404, /^No image at/],
];
for (const [path, status, message] of errorCases) {
  errors(`${status} ${path}`, async () => {
    const response = await get(path);
    assert.is(response.status, status);
    assert.match(response.headers.get('content-type')!, /^application\/json/);
    const body = (await response.json()) as { error: string; availableBrands?: string[] };
    assert.match(body.error, message);
    if (path === '/api/image/brand/spigot') assert.equal(body.availableBrands, ALL_BRANDS);
  });
}
errors.run();

const caching = suite('render cache');
caching.before(setup);
caching.after(teardown);

caching('a cached answer calls sharp no more; a precomputed or original answer never does', async () => {
  const context = liveContext(ctx.tree);
  const api = createApi(context);
  const first = await api.request('/api/image/brand/folia?size=321&format=webp');
  assert.is(first.status, 200);
  assert.is(context.renderer.renders(), 1);
  const second = await api.request('/api/image/brand/folia?size=321&format=webp');
  assert.ok(Buffer.from(await first.arrayBuffer()).equals(Buffer.from(await second.arrayBuffer())));
  assert.is(context.renderer.renders(), 1, 'the second answer came from the cache');
  const revalidated = await api.request('/api/image/brand/folia?size=321&format=webp', {
    headers: { 'if-none-match': first.headers.get('etag')! },
  });
  assert.is(revalidated.status, 304);
  await api.request('/api/image/brand/folia');
  assert.is(context.renderer.renders(), 1, 'originals are the source bytes');
  const precomputed = createApi({ ...context, tree: () => ctx.tree });
  await precomputed.request('/api/image/brand/folia?size=64&format=gif');
  assert.is(context.renderer.renders(), 1, 'a precomputed size is read from the tree');
});

caching('resized answers expire after an hour (SPEC 8) and are rendered again', async () => {
  let now = Date.parse('2026-11-22T00:00:00Z');
  const context = {
    ...liveContext(ctx.tree),
    imageCache: createByteCache(createMemoryStorage(), 'brand-images', { now: () => now, memoryBytes: 1 }),
  };
  const api = createApi(context);
  const response = await api.request('/api/image/brand/purpurmc?size=99');
  assert.is(response.headers.get('cache-control'), 'public, max-age=3600');
  now += 59 * 60_000;
  await api.request('/api/image/brand/purpurmc?size=99');
  assert.is(context.renderer.renders(), 1);
  now += 2 * 60_000;
  await api.request('/api/image/brand/purpurmc?size=99');
  assert.is(context.renderer.renders(), 2);
});

caching('a flood of large resizes is rendered at most two at a time', async () => {
  const context = liveContext(ctx.tree);
  const api = createApi(context);
  const responses = await Promise.all(
    Array.from({ length: 12 }, (_, i) => api.request(`/api/image/brand/canvasmc?size=${1500 + i}&format=png`)),
  );
  assert.ok(responses.every((r) => r.status === 200));
  assert.is(context.renderer.renders(), 12);
  assert.ok(context.renderer.peak() <= 2, `peak ${context.renderer.peak()}`);
});
caching('IMAGE_CACHE=off (renderAlways) renders every query, for benchmarks', async () => {
  const context = { ...liveContext(ctx.tree), renderAlways: true };
  const api = createApi(context);
  for (let i = 0; i < 2; i++) assert.is((await api.request('/api/image/brand/folia?size=64')).status, 200);
  assert.is(context.renderer.renders(), 2);
});
caching.run();

const rebuild = suite('rebuilds');
rebuild('re-render only the images whose source changed', async () => {
  const workspace = await makeWorkspace({ build: false });
  const cacheDir = join(workspace.dir, 'cache');
  try {
    const first = await runBuild({ dataDir: workspace.dataDir, distDir: workspace.distDir, cacheDir });
    assert.ok(first.rendered > 400, `${first.rendered} rendered at first`);
    const unchanged = await runBuild({ dataDir: workspace.dataDir, distDir: workspace.distDir, cacheDir });
    assert.is(unchanged.rendered, 0);
    const folia = join(workspace.dataDir, 'brands/folia/default.png');
    await writeFile(folia, await sharp(folia).flop().png().toBuffer());
    const changed = await runBuild({ dataDir: workspace.dataDir, distDir: workspace.distDir, cacheDir });
    // folia's one variant: 11 sizes x 4 formats, and webp, jpg and gif at the original size.
    assert.is(changed.rendered, 11 * 4 + 3);
  } finally {
    await workspace.remove();
  }
});
rebuild.run();

const sources = suite('brand sources in data/');
const sourceCases: [string, (dir: string) => Promise<void>, RegExp][] = [
  [
    'a missing file',
    async (dir) =>
      writeFile(join(dir, 'brands/folia/default.png'), '')
        .then(() => import('node:fs/promises'))
        .then((fs) => fs.rm(join(dir, 'brands/folia/default.png'))),
    /folia\/default\.png: missing/,
  ],
  [
    'a small PNG',
    async (dir) =>
      writeFile(
        join(dir, 'brands/folia/default.png'),
        await sharp({ create: { width: 200, height: 200, channels: 4, background: '#000' } })
          .png()
          .toBuffer(),
      ),
    /folia\/default\.png: width: 200 px, a PNG source needs at least 1024/,
  ],
  [
    'a JPEG named .png',
    async (dir) =>
      writeFile(
        join(dir, 'brands/folia/default.png'),
        await sharp({ create: { width: 1200, height: 1200, channels: 3, background: '#000' } })
          .jpeg()
          .toBuffer(),
      ),
    /folia\/default\.png: format: jpeg, expected png/,
  ],
  [
    'not an image',
    async (dir) => writeFile(join(dir, 'brands/leafmc/default.svg'), 'hello'),
    /leafmc\/default\.svg: not a readable SVG image/,
  ],
];
for (const [name, corrupt, message] of sourceCases) {
  sources(`the build refuses ${name}, naming the file`, () => assertRefusesData(corrupt, loadBrandSources, message));
}
sources.run();
