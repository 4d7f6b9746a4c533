import { Validator } from '@seriousme/openapi-schema-validator';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openApiDocument } from '../server/openapi.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { checkAnswer } from './openapi-conformance.ts';
import { makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

type Operation = {
  parameters?: { name: string; in: string; schema: Record<string, unknown> }[];
  responses: Record<string, unknown>;
  security?: unknown[];
};
const paths = openApiDocument().paths as Record<string, Record<string, Operation>>;

const ctx = {} as { workspace: Workspace; origin: RunningOrigin };

const document = suite('OpenAPI document');
document.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await startTestOrigin(ctx.workspace);
});
document.after(async () => {
  await ctx.origin.close();
  await ctx.workspace.remove();
});

document(
  '/api/openapi.json is a valid OpenAPI 3.1 document, precomputed, equal to the one built from the schemas',
  async () => {
    const response = await fetch(`${ctx.origin.url}/api/openapi.json`);
    assert.is(response.status, 200);
    const served = await response.json();
    assert.equal(served, JSON.parse(JSON.stringify(openApiDocument())));
    const validator = new Validator();
    const result = await validator.validate(served as Parameters<Validator['validate']>[0]);
    assert.ok(result.valid, JSON.stringify(result.errors));
    assert.is(validator.version, '3.1');
  },
);

document('every endpoint of SPEC 4, ingestion and operations is documented, with its method', () => {
  const operations = Object.entries(paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );
  assert.equal(operations.sort(), [
    'GET /api/badges/downloads.{format}',
    'GET /api/badges/latest/{serverSoftware}.{format}',
    'GET /api/badges/latest/{serverSoftware}/{javaVersion}.{format}',
    'GET /api/badges/players/{id}.{format}',
    'GET /api/charts/example',
    'GET /api/image/brand',
    'GET /api/image/brand/{brand}',
    'GET /api/openapi.json',
    'GET /api/plugin-versions',
    'GET /api/plugin-versions/by-hash/{algorithm}/{hash}',
    'GET /api/plugin-versions/download/latest/{serverSoftware}',
    'GET /api/plugin-versions/download/latest/{serverSoftware}/{javaVersion}',
    'GET /api/plugin-versions/download/resolve/{serverSoftware}',
    'GET /api/plugin-versions/download/resolve/{serverSoftware}/{javaVersion}',
    'GET /api/plugin-versions/download/{id}',
    'GET /api/plugin-versions/download/{id}.sha256',
    'GET /api/plugin-versions/download/{id}.sha512',
    'GET /api/plugin-versions/downloads',
    'GET /api/plugin-versions/feed.atom',
    'GET /api/plugin-versions/feed/{serverSoftware}.atom',
    'GET /api/plugin-versions/latest/{serverSoftware}',
    'GET /api/plugin-versions/latest/{serverSoftware}.txt',
    'GET /api/plugin-versions/latest/{serverSoftware}/{javaVersion}',
    'GET /api/plugin-versions/latest/{serverSoftware}/{javaVersion}.txt',
    'GET /api/plugin-versions/resolve/{serverSoftware}',
    'GET /api/plugin-versions/resolve/{serverSoftware}/{javaVersion}',
    'GET /api/plugin-versions/update-check/{serverSoftware}/{javaVersion}/{current}',
    'GET /api/plugin-versions/{id}',
    'GET /api/project',
    'GET /api/project/icon/{size}.png',
    'GET /api/servers/{id}/chart/players',
    'GET /brand/{brand}/{file}',
    'GET /brand/{brand}/{variant}/{file}',
    'GET /healthz',
    'PATCH /api/plugin-versions/{id}',
    'POST /api/plugin-versions',
    'POST /api/plugin-versions/by-hash/update',
    'POST /api/servers/{id}/chart-urls',
    'POST /api/servers/{id}/stats',
  ]);
});

document('parameters carry the validation rules: ranges, defaults and allowed values', () => {
  const params = (path: string, method = 'get') =>
    Object.fromEntries((paths[path]![method]!.parameters ?? []).map((p) => [`${p.in}:${p.name}`, p.schema]));
  const chart = params('/api/servers/{id}/chart/players');
  assert.equal(chart['query:days'], { type: 'integer', minimum: 1, maximum: 365, default: 7 });
  assert.equal(chart['query:width'], { type: 'integer', minimum: 200, maximum: 2000, default: 800 });
  assert.equal(chart['query:height'], { type: 'integer', minimum: 200, maximum: 2000, default: 400 });
  assert.equal((chart['query:theme'] as { enum: string[] }).enum, ['light', 'dark', 'auto']);
  assert.equal((chart['query:background'] as { enum: string[] }).enum, ['solid', 'transparent']);
  assert.equal((chart['query:format'] as { enum: string[] }).enum, ['svg', 'png', 'json', 'csv']);
  assert.is((chart['query:sig'] as { pattern: string }).pattern, '^[A-Za-z0-9_-]{43}$');
  assert.is((chart['query:exp'] as { pattern: string }).pattern, '^\\d{1,12}$');
  assert.is((chart['path:id'] as { format: string }).format, 'uuid');
  const brand = params('/api/image/brand/{brand}');
  assert.equal(brand['query:size'], { type: 'integer', minimum: 1, maximum: 2048 });
  assert.equal((brand['query:format'] as { enum: string[] }).enum, ['png', 'webp', 'jpg', 'gif', 'svg']);
  assert.equal((brand['query:download'] as { enum: string[] }).enum.sort(), ['0', '1', 'false', 'true']);
  assert.equal(
    (params('/api/plugin-versions/latest/{serverSoftware}/{javaVersion}')['path:javaVersion'] as { enum: string[] })
      .enum,
    ['8', '11', '17', '21', '25'],
  );
  for (const path of [
    '/api/plugin-versions/latest/{serverSoftware}',
    '/api/plugin-versions/latest/{serverSoftware}/{javaVersion}',
    '/api/plugin-versions/download/latest/{serverSoftware}',
    '/api/plugin-versions/download/latest/{serverSoftware}/{javaVersion}',
    '/api/plugin-versions/update-check/{serverSoftware}/{javaVersion}/{current}',
    '/api/plugin-versions/resolve/{serverSoftware}',
    '/api/plugin-versions/resolve/{serverSoftware}/{javaVersion}',
    '/api/plugin-versions/download/resolve/{serverSoftware}',
    '/api/plugin-versions/download/resolve/{serverSoftware}/{javaVersion}',
  ]) {
    assert.equal((params(path)['query:channel'] as { enum: string[] }).enum, ['release', 'beta', 'alpha'], path);
    assert.ok('400' in paths[path]!.get!.responses, `${path}: 400`);
  }
  assert.is('query:channel' in params('/api/plugin-versions/download/{id}'), false);
  assert.is('query:channel' in params('/api/plugin-versions/{id}'), false);
  // Issue 39: a release (1.21.4, 26.1.1) or a 26.x pre-release (26.2-snapshot-1, 26.2-pre-1, 26.2-rc-1).
  for (const path of ['/api/plugin-versions', '/api/plugin-versions/resolve/{serverSoftware}/{javaVersion}'])
    assert.is(
      (params(path)['query:minecraft'] as { pattern: string }).pattern,
      '^(?:\\d{1,3}\\.\\d{1,3}(\\.\\d{1,3})?|(?:2[6-9]|[3-9]\\d|[1-9]\\d{2})\\.\\d{1,3}(?:\\.\\d{1,3})?-(?:snapshot|pre|rc)-\\d{1,3})$',
      path,
    );
  const check = params('/api/plugin-versions/update-check/{serverSoftware}/{javaVersion}/{current}');
  assert.is((check['path:current'] as { maxLength: number }).maxLength, 64);
});

document('the chart as data (json, csv) answers as documented', async () => {
  for (const format of ['json', 'csv']) {
    const url = `${ctx.origin.url}/api/charts/example?days=3&format=${format}`;
    await checkAnswer('GET', url, await fetch(url));
  }
});

document('the rate limit, errors and auth are documented where they apply', () => {
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      // Badges are not limited: a README's badges come through a few shared proxies (GitHub's camo).
      // Issue 31's Modrinth-shaped lookup is a read sent by POST: limited as every read.
      const limited =
        (method === 'get' && !['/healthz', '/api/openapi.json'].includes(path) && !path.startsWith('/api/badges/')) ||
        (method === 'post' && path === '/api/plugin-versions/by-hash/update');
      // Ingestion has a limit of its own, per server key (INGEST_RATE_LIMIT), said by x-rate-limit;
      // publishing (issue 30) counts against SPEC 8's limit only when it fails.
      const rateLimit = (operation as { 'x-rate-limit'?: string })['x-rate-limit'];
      const perServerKey = rateLimit === 'per-server-key';
      const publishing = (method === 'post' && path === '/api/plugin-versions') || method === 'patch';
      assert.is(rateLimit === 'failures-only', publishing, `${method} ${path}: failures-only`);
      assert.is(
        perServerKey,
        method === 'post' && path === '/api/servers/{id}/stats',
        `${method} ${path}: x-rate-limit`,
      );
      assert.is('429' in operation.responses, limited || perServerKey || publishing, `${method} ${path}: 429`);
      assert.ok('500' in operation.responses, `${method} ${path}: 500`);
    }
  }
  assert.equal(paths['/api/servers/{id}/chart/players']!.get!.security, [{}, { ownerToken: [] }]);
  assert.equal(paths['/api/servers/{id}/stats']!.post!.security, [{ ingestKey: [] }]);
  assert.equal(paths['/api/servers/{id}/chart-urls']!.post!.security, [{ ownerToken: [] }]);
  const schemes = openApiDocument().components?.securitySchemes as Record<string, { type: string; scheme: string }>;
  assert.equal(paths['/api/plugin-versions']!.post!.security, [{ publishingToken: [] }]);
  assert.equal(paths['/api/plugin-versions/{id}']!.patch!.security, [{ publishingToken: [] }]);
  assert.equal(Object.keys(schemes).sort(), ['ingestKey', 'ownerToken', 'publishingToken']);
  for (const scheme of Object.values(schemes)) assert.equal([scheme.type, scheme.scheme], ['http', 'bearer']);
});

document.run();

const conformance = suite('OpenAPI conformance check');
const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', etag: '"a"', 'cache-control': 'public', ...headers },
  });
const refusals: [string, string, string, () => Response, RegExp][] = [
  ['an undocumented status', 'GET', '/api/plugin-versions', () => json({ error: 'x' }, 418), /status not documented/],
  [
    'a body off the schema',
    'GET',
    '/api/plugin-versions/latest/papermc',
    () => json({ version: { id: 'nope' } }),
    /body does not match the schema/,
  ],
  ['an extra field', 'GET', '/api/image/brand', () => json({ brands: {}, extra: 1 }), /body does not match the schema/],
  [
    'a missing ETag',
    'GET',
    '/api/plugin-versions',
    () => new Response('{}', { headers: { 'content-type': 'application/json', 'cache-control': 'x' } }),
    /required header ETag missing/,
  ],
  [
    'an undocumented content type',
    'GET',
    '/api/plugin-versions/download/latest/papermc',
    () =>
      new Response('<html>', {
        headers: {
          'content-type': 'text/html',
          etag: '"a"',
          'cache-control': 'x',
          'repr-digest': `sha-256=:${'A'.repeat(43)}=:, sha-512=:${'A'.repeat(86)}==:`,
          'content-location': '/api/plugin-versions/download/plugin-1-a',
        },
      }),
    /content type text\/html not documented/,
  ],
  ['a 200 for an unknown path', 'GET', '/nope', () => json({ ok: true }), /an undocumented path must answer 404/],
  [
    'a site page for a POST',
    'POST',
    '/versions',
    () => new Response('<p>', { headers: { 'content-type': 'text/html' } }),
    /an undocumented path must answer 404/,
  ],
  ['a 404 body that is not the error shape', 'GET', '/nope', () => json({ message: 'x' }, 404), /body does not match/],
  [
    'a 200 for an undocumented method',
    'DELETE',
    '/api/plugin-versions',
    () => json({}),
    /an undocumented method must answer 405/,
  ],
  [
    'a wrong Allow',
    'DELETE',
    '/api/plugin-versions',
    () => json({ error: 'x' }, 405, { allow: 'GET' }),
    /Allow GET is not the documented methods/,
  ],
  [
    'a malformed rate limit header',
    'GET',
    '/api/plugin-versions',
    () => json({ versions: [], lastUpdated: '2026-01-01T00:00:00.000Z' }, 200, { 'x-ratelimit-remaining': 'lots' }),
    /X-RateLimit-Remaining/,
  ],
];
for (const [name, method, path, answer, message] of refusals) {
  conformance(`refuses ${name}`, async () => {
    const error = await checkAnswer(method, `http://127.0.0.1${path}`, answer()).then(
      () => null,
      (e: Error) => e,
    );
    assert.ok(error, 'accepted');
    assert.match(error!.message, message);
  });
}
conformance('accepts a documented answer', async () => {
  await checkAnswer(
    'GET',
    'http://127.0.0.1/api/plugin-versions',
    json({ versions: [], lastUpdated: '2026-01-01T00:00:00.000Z' }),
  );
  await checkAnswer('GET', 'http://127.0.0.1/nope', json({ error: 'No endpoint at /nope' }, 404));
});
conformance.run();
