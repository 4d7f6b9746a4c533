// Issue 30: the generated nginx.conf sends publishing (POST and PATCH on /api/plugin-versions) to
// NGINX_PUBLISH_ORIGIN alone, with PUBLISH_MAX_BYTES as the body limit, streamed through; reads go
// where they went before. Two small loopback servers stand in for the origins: the test checks
// nginx's routing, each upstream logging what reached it.
import {
  createServer,
  request as httpRequest,
  type ClientRequest,
  type IncomingHttpHeaders,
  type Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { DEFAULT_DEPLOY } from '../server/config.ts';
import { Manifest } from '../server/tree/format.ts';
import { currentTreeDir } from '../server/tree/open.ts';
import { assertNginxAccepts } from './nginx-check.ts';
import {
  SHARED_BUILD_CACHE,
  findProgram,
  freePort,
  makeWorkspace,
  startNginx,
  until,
  type NginxServer,
  type Workspace,
} from './helpers.ts';

const NGINX = findProgram('nginx');
const MAX_BYTES = 2 * 2 ** 20;

/**
 * A stand-in origin: answers 200 with its name, logging `METHOD url bytes` once a body has arrived.
 * Its answers are not the depot's: the tests read them over node:http, past helpers.ts' OpenAPI check
 * of fetch, except /healthz (startNginx's probe), answered in the documented shape.
 */
type Upstream = { port: number; requests: string[]; received: number; close: () => Promise<void> };

async function startUpstream(name: string): Promise<Upstream> {
  const upstream = { requests: [] as string[], received: 0 };
  const server: Server = createServer((request, response) => {
    let bytes = 0;
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      upstream.received += chunk.length;
    });
    request.on('end', () => {
      response.setHeader('content-type', 'application/json');
      if (request.url === '/healthz') return response.end(JSON.stringify({ status: 'ok', tree: name }));
      upstream.requests.push(`${request.method} ${request.url} ${bytes}`);
      response.end(JSON.stringify({ origin: name, bytes }));
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return Object.assign(upstream, {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
    },
  });
}

const ctx = {} as {
  workspace: Workspace;
  treeDir: string;
  manifest: Manifest;
  reads: Upstream;
  publish: Upstream;
  nginx: NginxServer;
};
const forget = () => {
  for (const upstream of [ctx.reads, ctx.publish]) {
    upstream.requests.length = 0;
    upstream.received = 0;
  }
};
type Answer = { status: number; headers: IncomingHttpHeaders; body: Buffer; origin?: string };

/** One request through nginx over node:http, its body sent whole. */
function send(method: string, path: string, headers: Record<string, string> = {}, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(ctx.nginx.url + path, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const answer = { status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) };
        const fromStandIn = response.headers['content-type'] === 'application/json' && answer.status === 200;
        resolve(
          fromStandIn ? { ...answer, origin: (JSON.parse(String(answer.body)) as { origin: string }).origin } : answer,
        );
      });
    });
    request.on('error', reject);
    request.setTimeout(20_000, () => request.destroy(new Error(`${method} ${path}: no answer in 20 s`)));
    request.end(body);
  });
}

const routing = suite('nginx.conf: publishing goes to NGINX_PUBLISH_ORIGIN');
routing.before(async () => {
  ctx.workspace = await makeWorkspace({ build: false });
  [ctx.reads, ctx.publish] = [await startUpstream('reads'), await startUpstream('publish')];
  const port = await freePort();
  await runBuild({
    dataDir: ctx.workspace.dataDir,
    distDir: ctx.workspace.distDir,
    cacheDir: SHARED_BUILD_CACHE,
    site: false,
    rateLimit: null,
    deploy: {
      ...DEFAULT_DEPLOY,
      listen: `127.0.0.1:${port}`,
      origins: [`127.0.0.1:${ctx.reads.port}`],
      publishOrigin: `127.0.0.1:${ctx.publish.port}`,
      publishMaxBytes: MAX_BYTES,
    },
  });
  ctx.treeDir = (await currentTreeDir(ctx.workspace.distDir))!;
  ctx.manifest = Manifest.parse(JSON.parse(await readFile(join(ctx.treeDir, 'manifest.json'), 'utf8')));
  if (NGINX) ctx.nginx = await startNginx(NGINX, join(ctx.treeDir, 'nginx.conf'), port);
});
routing.after(async () => {
  await ctx.nginx?.stop();
  await ctx.reads.close();
  await ctx.publish.close();
  await ctx.workspace.remove();
});
routing.before.each(forget);

routing('nginx -t accepts it; the publish location streams, waits for a build and has its own upstream', async () => {
  const text = await readFile(join(ctx.treeDir, 'nginx.conf'), 'utf8');
  await assertNginxAccepts(text);
  assert.match(text, new RegExp(`upstream depot_publish \\{\\n  server 127\\.0\\.0\\.1:${ctx.publish.port};`));
  const publish = /location @publish \{[^}]*\}/.exec(text)?.[0] ?? '';
  assert.match(publish, /proxy_request_buffering off;/);
  assert.match(publish, /proxy_read_timeout 300s;/);
  assert.match(publish, new RegExp(`client_max_body_size ${MAX_BYTES + 2 ** 20};`));
});

if (!NGINX) console.warn('nginx-publish.test.ts: nginx not installed, routing through nginx not run');
else {
  routing('a multipart POST larger than the general 1m limit reaches the publish origin only', async () => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(MAX_BYTES)]), 'MyPlugin-1.0.0.jar');
    form.set('metadata', new Blob(['{"pluginVersion":"1.0.0"}'], { type: 'application/json' }));
    const encoded = new Response(form);
    const body = Buffer.from(await encoded.arrayBuffer());
    const type = encoded.headers.get('content-type')!;
    const answer = await send('POST', '/api/plugin-versions', { 'content-type': type }, body);
    assert.is(answer.status, 200, String(answer.body));
    assert.is(answer.origin, 'publish');
    assert.is(ctx.publish.requests.length, 1);
    assert.equal(ctx.publish.requests, [`POST /api/plugin-versions ${body.length}`], 'the whole body arrived');
    assert.equal(ctx.reads.requests, []);
  });

  routing('a PATCH of one version, with a query string, reaches the publish origin only', async () => {
    const path = '/api/plugin-versions/plugin-1800000000000-abcdef012345?dry=1';
    const body = Buffer.from(JSON.stringify({ withdrawn: { reason: 'broken' } }));
    const answer = await send('PATCH', path, { 'content-type': 'application/json' }, body);
    assert.is(answer.origin, 'publish');
    assert.equal(ctx.publish.requests, [`PATCH ${path} ${body.length}`]);
    assert.equal(ctx.reads.requests, []);
  });

  routing('GETs keep their answers: precomputed from the tree, the rest from the origins', async () => {
    for (const path of [
      '/api/plugin-versions',
      ...Object.keys(ctx.manifest.routes).filter(isVersionPath).slice(0, 2),
    ]) {
      const answer = await send('GET', path);
      const route = ctx.manifest.routes[path]!;
      assert.is(answer.status, 200, path);
      assert.equal(answer.body, await readFile(join(ctx.treeDir, route.file)), `${path}: the tree's file`);
      assert.is(answer.headers.etag, route.headers.etag!, path);
    }
    const uncommon = '/api/plugin-versions?uncommon=1';
    assert.is((await send('GET', uncommon)).origin, 'reads');
    assert.equal(ctx.reads.requests, [`GET ${uncommon} 0`]);
    assert.equal(ctx.publish.requests, []);
  });

  routing('other POSTs (ingestion) still go to the origins, with the general limit', async () => {
    const answer = await send('POST', '/api/servers/abc/stats', {}, Buffer.from('{"players":1}'));
    assert.is(answer.origin, 'reads');
    assert.equal(ctx.publish.requests, []);
  });

  routing('a Content-Length over PUBLISH_MAX_BYTES is refused 413 by nginx before a byte is read', async () => {
    const { status, contentType, body } = await rawUpload(MAX_BYTES + 2 * 2 ** 20);
    assert.is(status, 413);
    assert.is(contentType, 'application/json; charset=utf-8');
    assert.equal(JSON.parse(body), {
      error: `The upload is larger than PUBLISH_MAX_BYTES allows (${MAX_BYTES} bytes)`,
    });
    assert.equal(ctx.publish.requests, []);
    assert.is(ctx.publish.received, 0);
  });

  routing(
    "a chunked upload (no Content-Length) past PUBLISH_MAX_BYTES is the same JSON 413, not nginx's page",
    async () => {
      const { status, contentType, body } = await chunkedUpload(MAX_BYTES + 4 * 2 ** 20);
      assert.is(status, 413);
      assert.is(contentType, 'application/json; charset=utf-8');
      assert.equal(JSON.parse(body), {
        error: `The upload is larger than PUBLISH_MAX_BYTES allows (${MAX_BYTES} bytes)`,
      });
    },
  );

  routing('the upload streams through: the origin has its first bytes before the client sent the rest', async () => {
    const chunk = 256 * 1024;
    const request = httpRequest(`${ctx.nginx.url}/api/plugin-versions`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(2 * chunk) },
    });
    // A connection cut (nginx refusing the body) is status 0: the assertion below says so.
    const answered = new Promise<number>((resolve) => {
      request.on('response', (response) => response.resume().on('end', () => resolve(response.statusCode!)));
      request.on('error', () => resolve(0));
    });
    request.write(Buffer.alloc(chunk));
    try {
      await until(() => ctx.publish.received > 0, 'the first half at the publish origin', 5_000);
    } finally {
      request.end(Buffer.alloc(chunk));
    }
    assert.is(await answered, 200);
    assert.equal(ctx.publish.requests, [`POST /api/plugin-versions ${2 * chunk}`]);
  });
}
routing.run();

const isVersionPath = (path: string) => /^\/api\/plugin-versions\/plugin-[^/?]+$/.test(path);

type UploadAnswer = { status: number; contentType: string; body: string };

/** A POST to the publishing path with `headers`, its body written (or not) by `send`: nginx's answer. */
function postUpload(
  headers: Record<string, string>,
  send: (request: ClientRequest, answered: () => boolean) => void,
): Promise<UploadAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${ctx.nginx.url}/api/plugin-versions`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'multipart/form-data; boundary=x', ...headers },
    });
    let answered = false;
    request.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        request.destroy();
        resolve({
          status: response.statusCode!,
          contentType: String(response.headers['content-type']),
          body: Buffer.concat(chunks).toString(),
        });
      });
    });
    request.on('error', (error) => (answered ? undefined : reject(error)));
    request.setTimeout(20_000, () => request.destroy(new Error('no answer in 20 s')));
    send(request, () => answered);
  });
}

/** Headers announcing `bytes` and no body sent: what nginx answers from Content-Length alone. */
const rawUpload = (bytes: number) =>
  postUpload({ 'content-length': String(bytes) }, (request) => request.flushHeaders());

/** A body sent chunked, 256 KiB at a time, until nginx answers or `most` bytes are sent. */
const chunkedUpload = (most: number) =>
  postUpload({ 'transfer-encoding': 'chunked' }, (request, answered) => {
    let sent = 0;
    const next = () => {
      if (answered() || request.destroyed) return;
      if (sent >= most) return void request.end();
      sent += 256 * 1024;
      request.write(Buffer.alloc(256 * 1024, 120), () => setImmediate(next));
    };
    next();
  });
