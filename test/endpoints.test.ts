import { Agent, request } from 'node:http';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ENDPOINTS } from '../server/endpoints.ts';
import { KNOWN_PATH_MAX_LENGTH, createEndpointTable } from '../server/http/endpoints.ts';
import { OPENAPI_PATHS } from '../server/openapi.ts';
import type { RunningOrigin } from '../server/origin.ts';
import { makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

// Issue 27, item 7: the endpoint lookup cache remembered every path asked for, 404s of any length included.

const table = suite('createEndpointTable');

table('remembers only documented paths of a bounded length, and finds what rou3 finds', () => {
  const path = fc.oneof(
    fc.webPath(),
    fc.string({ maxLength: 600 }).map((tail) => `/api/plugin-versions/download/${encodeURIComponent(tail)}`),
    fc.constantFrom('/healthz', '/api/plugin-versions', '/api/servers/abc/chart/players'),
  );
  fc.assert(
    fc.property(fc.array(path, { maxLength: 50 }), (paths) => {
      const endpoints = createEndpointTable(OPENAPI_PATHS);
      const fresh = createEndpointTable(OPENAPI_PATHS);
      let remembered = 0;
      for (const path of paths) {
        // The first lookup and a remembered one answer as a table that never saw the path.
        assert.is(endpoints.findEndpoint(path)?.allow, fresh.findEndpoint(path)?.allow);
        assert.is(endpoints.findEndpoint(path)?.allow, createEndpointTable(OPENAPI_PATHS).findEndpoint(path)?.allow);
        if (endpoints.findEndpoint(path) && path.length <= KNOWN_PATH_MAX_LENGTH) remembered++;
      }
      const use = endpoints.cacheUse();
      assert.ok(use.paths <= remembered, `${use.paths} remembered of ${remembered} documented short paths`);
      assert.ok(use.chars <= use.paths * KNOWN_PATH_MAX_LENGTH);
    }),
    { numRuns: 200 },
  );
});

table.run();

const http = suite('endpoint lookups over HTTP');
const ctx = {} as { workspace: Workspace; origin: RunningOrigin };
http.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await startTestOrigin(ctx.workspace);
});
http.after(async () => {
  await ctx.origin?.close();
  await ctx.workspace?.remove();
});

/** Status codes of GETs of `paths`, 8 at a time over kept-alive connections. */
async function statuses(paths: string[]): Promise<Map<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const counts = new Map<number, number>();
  const get = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(ctx.origin.url + path, { agent }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode!));
      });
      req.on('error', reject);
      req.setTimeout(30_000, () => req.destroy(new Error(`${path}: no answer in 30 s`)));
      req.end();
    });
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const status = await get(paths[next++]!);
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
  };
  try {
    await Promise.all(Array.from({ length: 8 }, worker));
  } finally {
    agent.destroy();
  }
  return counts;
}

http('20,000 random 404 paths, short and long, leave nothing in the lookup cache', async () => {
  const before = ENDPOINTS.cacheUse();
  const random = (length: number) =>
    Array.from({ length }, () => 'abcdefghijklmnopqrstuvwxyz0123456789-_'[Math.floor(Math.random() * 38)]).join('');
  const paths = Array.from({ length: 20_000 }, (_, i) =>
    i % 4 === 0
      ? `/api/plugin-versions/download/${random(2000)}` // a documented template, over-long
      : i % 4 === 1
        ? `/api/${random(4000)}`
        : `/api/${random(8 + (i % 40))}/${random(12)}`,
  );
  const counts = await statuses(paths);
  assert.equal([...counts.keys()], [404], 'every one a 404');
  const after = ENDPOINTS.cacheUse();
  assert.ok(after.paths <= before.paths + 5, `the cache grew from ${before.paths} to ${after.paths} paths`);
  assert.ok(after.chars <= before.chars + 5 * KNOWN_PATH_MAX_LENGTH, `${after.chars} characters remembered`);
  // A documented path of ordinary length is still remembered.
  assert.equal([...(await statuses(['/api/plugin-versions/download/not-a-version-id'])).keys()], [404]);
  assert.is(ENDPOINTS.cacheUse().paths, after.paths + 1);
});

http.run();
