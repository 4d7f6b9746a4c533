import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { suite } from 'uvu';
import { VERSION_RULES } from '../server/versions/paths.ts';
import * as assert from 'uvu/assert';
import { openApiDocument } from '../server/openapi.ts';
import type { RunningOrigin } from '../server/origin.ts';
import type { RequestLog } from '../server/http/request-log.ts';
import { createFileStorage } from '../server/storage.ts';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import {
  makeAccounts,
  makeWorkspace,
  rawRequest,
  startTestOrigin,
  until,
  type Accounts,
  type Workspace,
} from './helpers.ts';
import { templateOf } from './openapi-conformance.ts';
import { FLUSH_MS } from '../server/downloads/counter.ts';

// SPEC 5, 7, 8 and issue 5's HTTP conventions, over loopback against the real origin.

const ctx = {} as {
  workspace: Workspace;
  accounts: Accounts;
  origin: RunningOrigin;
  log: RequestLog[];
  versionId: string;
  sha256: string;
};

async function setup() {
  ctx.workspace = await makeWorkspace();
  ctx.accounts = await makeAccounts(ctx.workspace);
  ctx.log = [];
  ctx.origin = await startTestOrigin(ctx.workspace, {
    storage: createFileStorage(ctx.workspace.storageDir),
    rateLimit: { limit: 100_000, windowSeconds: 900 },
    log: (entry) => ctx.log.push(entry),
  });
  const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
  ctx.versionId = tree.catalog.versions[0]!.id;
  ctx.sha256 = tree.catalog.versions[0]!.sha256;
}
async function teardown() {
  await ctx.origin.close();
  await ctx.workspace.remove();
}

const url = (path: string) => ctx.origin.url + path;
const get = (path: string, init?: RequestInit) => fetch(url(path), init);
const owner = () => ({ authorization: `Bearer ${ctx.accounts.owner}` });

/** One URL per GET operation of the OpenAPI document, precomputed and live forms both. */
function getSamples(): string[] {
  const { publicServer } = ctx.accounts;
  return [
    '/api/plugin-versions',
    // Before the downloads below: what they add reaches the counts a second later, not between this GET and its HEAD.
    '/api/plugin-versions/downloads',
    '/api/plugin-versions/latest/papermc',
    '/api/plugin-versions/latest/PaperMC/21',
    // Issue 31: the plain-text latest for updater libraries.
    '/api/plugin-versions/latest/papermc.txt',
    '/api/plugin-versions/latest/Purpur/21.txt',
    '/api/plugin-versions/download/latest/velocity',
    '/api/plugin-versions/download/latest/Velocity/21',
    `/api/plugin-versions/${ctx.versionId}`,
    `/api/plugin-versions/download/${ctx.versionId}`,
    `/api/plugin-versions/download/${ctx.versionId}.sha256`,
    `/api/plugin-versions/download/${ctx.versionId}.sha512`,
    `/api/plugin-versions/by-hash/sha256/${ctx.sha256.toUpperCase()}`,
    '/api/plugin-versions/update-check/papermc/21/1.3.0',
    '/api/plugin-versions/resolve/purpur',
    '/api/plugin-versions/resolve/Purpur/21?minecraft=1.21.4&channel=beta',
    '/api/plugin-versions/download/resolve/waterfall',
    '/api/plugin-versions/download/resolve/Waterfall/17?minecraft=1.21',
    '/api/plugin-versions?minecraft=1.21.4',
    '/api/plugin-versions/update-check/PaperMC/21/1.4.1-SNAPSHOT?channel=beta',
    '/api/plugin-versions/feed.atom',
    '/api/plugin-versions/feed/velocity.atom',
    '/api/plugin-versions/feed/Velocity.atom',
    '/api/image/brand',
    '/api/image/brand/papermc',
    '/api/image/brand/LeafMC?size=100',
    '/brand/papermc/light.png',
    '/brand/velocity/white/64.webp',
    '/api/charts/example',
    '/api/charts/example?days=30&theme=dark',
    '/api/charts/example?theme=auto&background=transparent',
    `/api/servers/${publicServer.id}/chart/players`,
    '/api/badges/latest/papermc.svg',
    '/api/badges/latest/PaperMC/21.png',
    '/api/badges/downloads.json',
    `/api/badges/players/${publicServer.id}.svg`,
    '/api/charts/example?format=json',
    `/api/servers/${publicServer.id}/chart/players?days=30&format=csv`,
    // Issue 31: the plugin's own identity and its icon.
    '/api/project',
    '/api/project/icon/32.png',
    '/healthz',
    '/api/openapi.json',
  ];
}

const conventions = suite('HTTP conventions');
conventions.before(setup);
conventions.after(teardown);

conventions('the samples cover every GET operation of the OpenAPI document', () => {
  const documented = Object.entries(openApiDocument().paths ?? {})
    .filter(([, item]) => item.get)
    .map(([template]) => template);
  const sampled = new Set(getSamples().map((path) => templateOf(path.split('?')[0]!)));
  assert.equal([...sampled].sort(), documented.sort());
});

conventions('HEAD answers like GET, without a body, wherever GET is', async () => {
  for (const path of getSamples()) {
    const [full, head] = [await get(path), await get(path, { method: 'HEAD' })];
    const bytes = await full.arrayBuffer();
    assert.is(head.status, 200, path);
    assert.is((await head.arrayBuffer()).byteLength, 0, path);
    for (const name of [
      'content-type',
      'etag',
      'cache-control',
      'content-disposition',
      'content-encoding',
      'vary',
      'access-control-allow-origin',
    ]) {
      assert.is(head.headers.get(name), full.headers.get(name), `${path}: ${name}`);
    }
    if (!full.headers.get('content-encoding'))
      assert.is(Number(head.headers.get('content-length')), bytes.byteLength, path);
  }
});

conventions('other methods get 405 with Allow; OPTIONS answers the methods', async () => {
  for (const path of getSamples()) {
    // Issue 30: the list takes a publish (POST), a version's own path its corrections (PATCH).
    const bare = path.split('?')[0]!;
    const publishing =
      bare === '/api/plugin-versions' ? 'POST' : VERSION_RULES.version.match(bare) ? 'PATCH' : undefined;
    const allow = publishing ? `GET, HEAD, ${publishing}, OPTIONS` : 'GET, HEAD, OPTIONS';
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'].filter((m) => m !== publishing)) {
      const response = await get(path, { method });
      assert.is(response.status, 405, `${method} ${path}`);
      assert.is(response.headers.get('allow'), allow);
      assert.match(
        ((await response.json()) as { error: string }).error,
        `${method} is not allowed on ${bare}; allowed: ${allow}`,
      );
    }
    const options = await get(path, { method: 'OPTIONS' });
    assert.is(options.status, 204, path);
  }
  for (const path of [
    `/api/servers/${ctx.accounts.publicServer.id}/stats`,
    `/api/servers/${ctx.accounts.publicServer.id}/chart-urls`,
  ]) {
    for (const method of ['GET', 'HEAD', 'PUT']) {
      const response = await get(path, { method });
      assert.is(response.status, 405, `${method} ${path}`);
      assert.is(response.headers.get('allow'), 'POST, OPTIONS');
    }
  }
});

conventions('unknown paths answer a JSON 404 that names the path, never HTML', async () => {
  for (const path of [
    '/',
    '/index.html',
    '/versions',
    '/api',
    '/api/plugin-versions/latest',
    '/api/plugin-versions/latest/papermc/21/extra',
    '/brand',
    '/api/image/brand/papermc/x',
    '/favicon.ico',
    '/api/servers',
  ]) {
    for (const method of ['GET', 'POST']) {
      const response = await get(path, { method });
      assert.is(response.status, 404, `${method} ${path}`);
      assert.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(await response.json(), { error: `No endpoint at ${path}` });
    }
  }
});

conventions('every cacheable answer has a strong ETag and answers If-None-Match with 304, in any coding', async () => {
  // Every download this test makes counted first, and stored: a count landing between a GET and
  // its conditional GET would change the download badges' bytes in between (a new ETag, rightly).
  for (const path of getSamples()) await (await get(path)).arrayBuffer();
  await new Promise((resolve) => setTimeout(resolve, FLUSH_MS + 500));
  for (const path of getSamples().filter((p) => p !== '/healthz')) {
    for (const coding of ['identity', 'br', 'gzip']) {
      const first = await get(path, { headers: { 'accept-encoding': coding } });
      await first.arrayBuffer();
      const etag = first.headers.get('etag');
      assert.match(etag ?? '', /^"[0-9a-f]{64}(-br|-gzip)?"$/, `${path} (${coding})`);
      const again = await get(path, { headers: { 'accept-encoding': coding, 'if-none-match': etag! } });
      assert.is(again.status, 304, `${path} (${coding})`);
      assert.is((await again.arrayBuffer()).byteLength, 0);
      assert.is(again.headers.get('etag'), etag);
      assert.is(again.headers.get('cache-control'), first.headers.get('cache-control'));
    }
  }
  // The owner's private chart too, and it stays private.
  const path = `/api/servers/${ctx.accounts.privateServer.id}/chart/players`;
  const first = await get(path, { headers: owner() });
  const again = await get(path, { headers: { ...owner(), 'if-none-match': first.headers.get('etag')! } });
  assert.is(again.status, 304);
  assert.is(again.headers.get('cache-control'), 'private, max-age=300');
});

conventions('JSON and SVG come as br or gzip as Accept-Encoding asks, the same bytes once decoded', async () => {
  const cases: [string, boolean][] = [
    ['/api/plugin-versions', true], // precomputed, with .br and .gz beside it in the tree
    ['/api/openapi.json', true],
    ['/api/charts/example', true],
    ['/api/charts/example?days=90&width=1200', false], // live, compressed on demand
    [`/api/servers/${ctx.accounts.publicServer.id}/chart/players?days=30`, false],
  ];
  for (const [path, precomputed] of cases) {
    const identity = await rawRequest(url(path));
    assert.is(identity.headers['content-encoding'], undefined, path);
    assert.is(identity.headers.vary, 'accept-encoding', path);
    assert.ok(identity.body.length >= 1024, `${path}: ${identity.body.length} bytes`);
    const choices: [string, string | undefined][] = [
      ['br', 'br'],
      ['gzip', 'gzip'],
      ['gzip, deflate, br', 'br'],
      ['br;q=0.5, gzip', 'gzip'],
      ['br;q=0, gzip;q=0', undefined],
      ['identity', undefined],
      ['*', 'br'],
    ];
    for (const [accept, expected] of choices) {
      const answer = await rawRequest(url(path), { headers: { 'accept-encoding': accept } });
      assert.is(answer.headers['content-encoding'], expected, `${path} with ${accept}`);
      assert.is(answer.headers.vary, 'accept-encoding');
      assert.is(Number(answer.headers['content-length']), answer.body.length);
      const decoded =
        expected === 'br'
          ? brotliDecompressSync(answer.body)
          : expected === 'gzip'
            ? gunzipSync(answer.body)
            : answer.body;
      assert.ok(decoded.equals(identity.body), `${path} with ${accept}: decoded bytes differ`);
      if (expected) assert.ok(answer.body.length < identity.body.length * 0.6, `${path}: ${expected} saves little`);
      if (expected) assert.is(answer.headers.etag, `${(identity.headers.etag as string).slice(0, -1)}-${expected}"`);
    }
    if (precomputed) {
      const tree = await openTree((await currentTreeDir(ctx.workspace.distDir))!);
      const entry = tree.routes.get(path)!;
      assert.equal(entry.encodings, ['br', 'gzip'], path);
      for (const ext of ['br', 'gz']) await access(join(tree.dir, `${entry.file}.${ext}`));
    }
  }
  // Small answers and binary ones are never compressed.
  for (const path of [
    '/api/plugin-versions/latest/papermc',
    '/brand/papermc/light.png',
    `/api/plugin-versions/download/${ctx.versionId}`,
  ]) {
    const answer = await rawRequest(url(path), { headers: { 'accept-encoding': 'br, gzip' } });
    assert.is(answer.headers['content-encoding'], undefined, path);
  }
});

conventions('CORS on exactly the public endpoints; nosniff on every answer', async () => {
  const { privateServer, publicServer } = ctx.accounts;
  const isPublic = async (path: string, init?: RequestInit) => {
    const response = await get(path, init);
    await response.arrayBuffer();
    assert.is(response.headers.get('x-content-type-options'), 'nosniff', path);
    return response.headers.get('access-control-allow-origin') === '*';
  };
  for (const path of getSamples().filter((p) => p !== '/healthz')) assert.ok(await isPublic(path), path);
  // Errors of public endpoints are readable by pages too.
  for (const path of ['/api/plugin-versions/latest/forge', '/api/image/brand/spigot', '/api/charts/example?days=0'])
    assert.ok(await isPublic(path), path);
  // Private answers, ingestion and operations never carry CORS.
  assert.not.ok(await isPublic(`/api/servers/${privateServer.id}/chart/players`, { headers: owner() }));
  assert.not.ok(await isPublic(`/api/servers/${privateServer.id}/chart/players`));
  assert.not.ok(
    await isPublic(`/api/servers/${publicServer.id}/stats`, {
      method: 'POST',
      headers: { authorization: `Bearer ${publicServer.ingestKey}` },
      body: '{"players":3}',
    }),
  );
  assert.not.ok(await isPublic('/healthz'));
  assert.not.ok(await isPublic('/nope'));
  // Preflight: public endpoints allow any origin to GET; the private chart allows none.
  const preflight = await get('/api/plugin-versions/latest/papermc', {
    method: 'OPTIONS',
    headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
  });
  assert.is(preflight.headers.get('access-control-allow-origin'), '*');
  assert.is(preflight.headers.get('access-control-allow-methods'), 'GET, HEAD');
  const privatePreflight = await get(`/api/servers/${privateServer.id}/chart/players`, {
    method: 'OPTIONS',
    headers: { origin: 'https://example.org' },
  });
  assert.is(privatePreflight.status, 204);
  assert.is(privatePreflight.headers.get('access-control-allow-origin'), null);
  // Browsers may read the rate limit fields of limited answers.
  const limited = await get('/api/plugin-versions');
  assert.match(
    limited.headers.get('access-control-expose-headers')!,
    /RateLimit-Policy, RateLimit, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After/,
  );
});

conventions(
  'Range: a unit other than bytes is ignored; a 416 carries the CORS, nosniff and rate-limit fields of its endpoint',
  async () => {
    for (const path of [
      '/api/plugin-versions/download/latest/velocity',
      '/api/plugin-versions/download/latest/VeLoCiTy',
    ]) {
      const whole = await rawRequest(url(path));
      for (const range of ['items=0-5', 'lines=0-', 'items=99999999-']) {
        const answer = await rawRequest(url(path), { headers: { range } });
        assert.is(answer.status, 200, `${path} ${range}`);
        assert.is(answer.headers['content-range'], undefined);
        assert.ok(answer.body.equals(whole.body), `${path} ${range}: the whole file`);
      }
      assert.is(
        (await rawRequest(url(path), { headers: { range: 'Bytes=0-5' } })).status,
        206,
        'units are case-insensitive',
      );
      const outside = await rawRequest(url(path), { headers: { range: `bytes=${whole.body.length + 10}-` } });
      assert.is(outside.status, 416, path);
      assert.is(outside.headers['content-range'], `bytes */${whole.body.length}`);
      assert.is(outside.headers['content-type'], 'application/json; charset=utf-8');
      for (const name of [
        'x-content-type-options',
        'access-control-allow-origin',
        'access-control-expose-headers',
        'ratelimit-policy',
        'ratelimit',
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
      ]) {
        assert.ok(whole.headers[name], `${path}: the 200 has ${name}`);
        assert.ok(outside.headers[name], `${path}: the 416 has ${name}`);
      }
      assert.is(outside.headers.etag, undefined, 'no validator of the file on an error');
    }
  },
);

conventions('/healthz answers 200 with the tree served, never cached', async () => {
  const response = await get('/healthz');
  assert.is(response.status, 200);
  assert.is(response.headers.get('cache-control'), 'no-store');
  const body = (await response.json()) as { status: string; tree: string };
  assert.is(body.status, 'ok');
  assert.is(join(ctx.workspace.distDir, 'trees', body.tree), await currentTreeDir(ctx.workspace.distDir));
});

conventions('one log line per request with method, path, status, time, cache and client; never a secret', async () => {
  ctx.log.length = 0;
  const { privateServer, publicServer } = ctx.accounts;
  const requests: [string, RequestInit | undefined][] = [
    ['/api/plugin-versions/latest/papermc', undefined],
    ['/api/image/brand/folia?size=321', undefined],
    ['/api/image/brand/folia?size=321', undefined],
    [`/api/servers/${privateServer.id}/chart/players?days=3`, { headers: owner() }],
    [
      `/api/servers/${publicServer.id}/stats`,
      { method: 'POST', headers: { authorization: `Bearer ${publicServer.ingestKey}` }, body: '{"players":5}' },
    ],
    ['/nope?token=abc', undefined],
  ];
  for (const [path, init] of requests) await (await get(path, init)).arrayBuffer();
  // A line is written when Node closes the response, a moment after the client has it all.
  await until(() => ctx.log.length >= requests.length, 'a log line per request', 2000);
  assert.is(ctx.log.length, requests.length);
  assert.equal(
    ctx.log.map(({ method, path, status, cache }) => [method, path, status, cache]),
    [
      ['GET', '/api/plugin-versions/latest/papermc', 200, 'static'],
      ['GET', '/api/image/brand/folia', 200, 'miss'],
      ['GET', '/api/image/brand/folia', 200, 'hit'],
      ['GET', `/api/servers/${privateServer.id}/chart/players`, 200, 'miss'],
      ['POST', `/api/servers/${publicServer.id}/stats`, 204, undefined],
      ['GET', '/nope', 404, undefined],
    ],
  );
  for (const entry of ctx.log) {
    assert.is(entry.client, '127.0.0.1');
    assert.ok(entry.ms >= 0 && entry.ms < 10_000);
  }
  const text = JSON.stringify(ctx.log);
  for (const secret of [ctx.accounts.owner, publicServer.ingestKey, 'token=abc']) assert.not.ok(text.includes(secret));
});

conventions.run();
