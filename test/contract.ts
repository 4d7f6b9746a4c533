import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Manifest, type RouteEntry } from '../server/tree/format.ts';
import { rawRequest, type RawAnswer } from './helpers.ts';

/** What the contract runs against: a base URL and the tree whose manifest says what it must answer. */
export type ContractTarget = { url: string; treeDir: string };

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const CODINGS = [
  ['br', 'br'],
  ['gzip', 'gz'],
] as const;

/**
 * The black-box contract of the HTTP interface, run unchanged against the embedded origin and
 * against nginx in front of two origins: every precomputed answer as the manifest records it, in
 * every coding; live answers equal to their static twins byte for byte; the HTTP conventions and
 * errors. It knows nothing of what serves the URL.
 */
export function contractSuite(
  name: string,
  setup: { start: () => Promise<ContractTarget>; stop?: () => Promise<void> },
) {
  const test = suite(`contract: ${name}`);
  const ctx = {} as { target: ContractTarget; manifest: Manifest; files: Map<string, Buffer> };
  const target = () => ctx.target;
  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    rawRequest(target().url + path, { method, headers });
  const file = async (name: string) =>
    ctx.files.get(name) ?? ctx.files.set(name, await readFile(join(target().treeDir, name))).get(name)!;
  const entry = (path: string) => {
    const found = ctx.manifest.routes[path];
    if (!found) assert.unreachable(`${path} is not in the manifest`);
    return found!;
  };
  const json = (answer: RawAnswer) => JSON.parse(answer.body.toString()) as Record<string, unknown>;

  test.before(async () => {
    ctx.target = await setup.start();
    ctx.manifest = Manifest.parse(JSON.parse(await readFile(join(target().treeDir, 'manifest.json'), 'utf8')));
    ctx.files = new Map();
  });
  test.after(async () => {
    await setup.stop?.();
  });

  test("every precomputed answer, in every coding, is the manifest's file with the manifest's headers", async () => {
    const checks = Object.entries(ctx.manifest.routes).flatMap(([path, route]) => [
      [path, route, undefined] as const,
      ...(route.encodings ? CODINGS.map((coding) => [path, route, coding] as const) : []),
    ]);
    const limit = pLimit(8);
    await Promise.all(checks.map(([path, route, coding]) => limit(() => assertAnswers(path, route, coding))));
    assert.ok(checks.length > 700, `${checks.length} answers checked`);
  });
  const assertAnswers = async (path: string, route: RouteEntry, coding: (typeof CODINGS)[number] | undefined) => {
    const answer = await get(path, { 'accept-encoding': coding ? coding[0] : 'identity' });
    const what = `${path} (${coding?.[0] ?? 'identity'})`;
    assert.is(answer.status, route.status, what);
    const expected = await file(coding ? `${route.file}.${coding[1]}` : route.file);
    assert.is(sha256(answer.body), sha256(expected), `${what}: bytes`);
    for (const [header, value] of Object.entries(route.headers)) {
      const wanted = header === 'etag' && coding ? value.replace(/"$/, `-${coding[0]}"`) : value;
      assert.is(answer.headers[header], wanted, `${what}: ${header}`);
    }
    assert.is(answer.headers['content-encoding'], coding?.[0], `${what}: content-encoding`);
  };

  test('HEAD: the same headers and length, no body', async () => {
    const route = entry('/api/plugin-versions/download/latest/velocity');
    const head = await get('/api/plugin-versions/download/latest/velocity', {}, 'HEAD');
    assert.is(head.status, 200);
    assert.is(head.headers['content-length'], String(route.size));
    assert.is(head.headers['content-disposition'], route.headers['content-disposition']);
    assert.is(head.body.length, 0);
  });

  test("If-None-Match: 304 for JSON (any coding's ETag), JARs and images", async () => {
    for (const path of [
      '/api/plugin-versions',
      '/api/plugin-versions/download/latest/papermc',
      '/brand/papermc/light/256.webp',
    ]) {
      const etag = entry(path).headers.etag!;
      const answer = await get(path, { 'if-none-match': etag });
      assert.is(answer.status, 304, path);
      assert.is(answer.headers.etag, etag, path);
      assert.is(answer.body.length, 0);
    }
    const list = entry('/api/plugin-versions').headers.etag!;
    const gzipped = await get('/api/plugin-versions', {
      'if-none-match': list.replace(/"$/, '-br"'),
      'accept-encoding': 'gzip',
    });
    assert.is(gzipped.status, 304);
    assert.is(gzipped.headers.etag, list.replace(/"$/, '-gzip"'));
    assert.is((await get('/api/plugin-versions', { 'if-none-match': '"stale"' })).status, 200);
  });

  test('Range: one range 206; several ranges or a stale If-Range the whole file; outside the file 416 JSON', async () => {
    const path = '/api/plugin-versions/download/latest/papermc';
    const route = entry(path);
    const whole = await file(route.file);
    const part = await get(path, { range: 'bytes=0-9' });
    assert.is(part.status, 206);
    assert.is(part.headers['content-range'], `bytes 0-9/${route.size}`);
    assert.equal([...part.body], [...whole.subarray(0, 10)]);
    const resumed = await get(path, { range: 'bytes=10-19', 'if-range': route.headers.etag! });
    assert.is(resumed.status, 206);
    assert.is((await get(path, { range: 'bytes=0-1,4-5' })).status, 200);
    const stale = await get(path, { range: 'bytes=0-9', 'if-range': '"old"' });
    assert.is(stale.status, 200);
    assert.is(stale.body.length, route.size);
    const outside = await get(path, { range: `bytes=${route.size + 10}-` });
    assert.is(outside.status, 416);
    assert.is(outside.headers['content-range'], `bytes */${route.size}`);
    assert.match(String(json(outside).error), /range/i);
  });

  test('Accept-Encoding: q-values weighed, br preferred on a tie, identity when neither is acceptable', async () => {
    const cases: [string, string | undefined][] = [
      ['gzip;q=1, br;q=0.5', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
      ['*', 'br'],
      ['gzip, br', 'br'],
      ['deflate', undefined],
      ['br;q=0, gzip;q=0', undefined],
    ];
    for (const [accept, coding] of cases) {
      const answer = await get('/api/plugin-versions', { 'accept-encoding': accept });
      assert.is(answer.status, 200, accept);
      assert.is(answer.headers['content-encoding'], coding, accept);
    }
  });

  test('live answers equal their precomputed twins byte for byte', async () => {
    const twins: [string, string][] = [
      ['/api/plugin-versions/latest/PaperMC', '/api/plugin-versions/latest/papermc'],
      ['/api/plugin-versions/latest/VELOCITY/17', '/api/plugin-versions/latest/velocity/17'],
      ['/api/plugin-versions/download/latest/Folia', '/api/plugin-versions/download/latest/folia'],
      ['/api/image/brand/papermc?format=webp&size=256&variant=light', '/brand/papermc/light/256.webp'],
      ['/api/image/brand/PaperMC?variant=light&size=256&format=webp', '/brand/papermc/light/256.webp'],
      ['/api/plugin-versions?', '/api/plugin-versions'],
      // Lookup by hash: hex in any letter case; the precomputed file is the lowercase one.
      ...Object.keys(ctx.manifest.routes)
        .filter((path) => path.startsWith('/api/plugin-versions/by-hash/'))
        .slice(0, 2)
        .map((path): [string, string] => [path.replace(/[0-9a-f]+$/, (hex) => hex.toUpperCase()), path]),
    ];
    assert.ok(twins.length >= 8, 'twins of the lookups by hash');
    for (const [live, precomputed] of twins) {
      const [a, b] = [await get(live), await get(precomputed)];
      assert.is(a.status, 200, live);
      assert.is(sha256(a.body), sha256(b.body), `${live} == ${precomputed}`);
      for (const header of ['content-type', 'etag', 'cache-control', 'content-disposition'])
        assert.is(a.headers[header], b.headers[header], `${live}: ${header}`);
    }
  });

  test('answers no file holds: other sizes, other charts', async () => {
    const image = await get('/api/image/brand/folia?size=77&format=png');
    assert.is(image.status, 200);
    assert.is(image.headers['content-type'], 'image/png');
    const chart = await get('/api/charts/example?theme=dark&days=30&width=640&height=320');
    assert.is(chart.status, 200);
    assert.match(chart.body.toString(), /^<svg[^>]* width="640" height="320"/);
  });

  test('errors: JSON, naming the parameter, the path or the allowed values', async () => {
    const cases: [string, string, number, RegExp][] = [
      ['GET', '/nothing/here', 404, /^No endpoint at \/nothing\/here$/],
      ['GET', '/api/image/brand/papermc?size=0', 400, /^size must be an integer from 1 to 2048/],
      ['GET', '/api/image/brand/minecraft', 404, /^Unknown brand "minecraft"/],
      ['GET', '/api/plugin-versions/latest/forge', 404, /forge/i],
      ['GET', '/api/charts/example?days=400', 400, /^days must be an integer from 1 to 365/],
      ['GET', '/api/servers/00000000-0000-4000-8000-000000000000/chart/players', 404, /^No server with id/],
      [
        'PUT',
        '/api/plugin-versions',
        405,
        /^PUT is not allowed on \/api\/plugin-versions; allowed: GET, HEAD, POST, OPTIONS$/,
      ],
      ['DELETE', '/brand/papermc/light.png', 405, /^DELETE is not allowed/],
      ['POST', '/api/servers/00000000-0000-4000-8000-000000000000/stats', 404, /^No server with id/],
    ];
    for (const [method, path, status, message] of cases) {
      const answer = await get(path, {}, method);
      assert.is(answer.status, status, `${method} ${path}`);
      assert.match(String(answer.headers['content-type']), /^application\/json/, `${method} ${path}`);
      assert.match(String(json(answer).error), message, `${method} ${path}`);
    }
    const brand = json(await get('/api/image/brand/minecraft'));
    assert.equal(brand.availableBrands, ['papermc', 'velocity', 'folia', 'canvasmc', 'leafmc', 'purpurmc']);
    const missing = Object.entries(ctx.manifest.routes).find(([, route]) => route.status === 404);
    if (missing) {
      const answer = await get(missing[0]);
      assert.is(answer.status, 404, missing[0]);
      assert.is(sha256(answer.body), sha256(await file(missing[1].file)));
    }
  });

  test('OPTIONS: methods, and the CORS preflight on public endpoints', async () => {
    const preflight = await get(
      '/api/plugin-versions/latest/papermc',
      { origin: 'https://example.org', 'access-control-request-method': 'GET' },
      'OPTIONS',
    );
    assert.is(preflight.status, 204);
    assert.is(preflight.headers['access-control-allow-origin'], '*');
    assert.is(preflight.headers.allow, 'GET, HEAD, OPTIONS');
  });

  test.run();
}
