import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, request as httpRequest, validateHeaderValue } from 'node:http';
import { parse as parseDisposition } from 'content-disposition';
import fc from 'fast-check';
import { suite } from 'uvu';
import { assertNginxAccepts } from './nginx-check.ts';
import * as assert from 'uvu/assert';
import type { RunningOrigin } from '../server/origin.ts';
import type { RequestLog } from '../server/http/request-log.ts';
import { createFileStorage } from '../server/storage.ts';
import { nginxFiles } from '../build/deploy-configs.ts';
import { staticLayoutConfigs } from '../build/static-layout-configs.ts';
import { dispositionHeader } from '../server/http/disposition.ts';
import type { RouteEntry } from '../server/tree/format.ts';
import { createCatalog, loadCatalog } from '../server/versions/catalog.ts';
import { ChangelogMarkdown, acceptChangelog, changelogHtml } from '../server/changelog-markdown.ts';
import { releaseFeed } from '../server/versions/feed.ts';
import { FEED_PAGES } from '../server/page-paths.ts';
import { PluginVersionRecord, UserProfile } from '../server/versions/schema.ts';
import { htmlText, parseXmlStrictly } from './strict-xml.ts';
import {
  findProgram,
  freePort,
  makeAccounts,
  makeWorkspace,
  startNginx,
  spawnOrigin,
  startTestOrigin,
  until,
  type Accounts,
  type OriginProcess,
  type Workspace,
} from './helpers.ts';
import { NO_LOG } from '../server/helpers/log.ts';

// Issue 12: no request, however malformed, cut off or oversized, may stop the origin or earn a 500.

const ctx = {} as { workspace: Workspace; accounts: Accounts };
let prepared: Promise<void> | undefined;
/** One workspace and its accounts for both suites: a build and four CLI runs are the slow part. */
const prepare = () =>
  (prepared ??= (async () => {
    ctx.workspace = await makeWorkspace();
    ctx.accounts = await makeAccounts(ctx.workspace);
  })());

/** A POST to the ingestion endpoint that sends `head` of its body, then hangs up. */
function abortedUpload(url: string, id: string, key: string, chunked: boolean): Promise<void> {
  return new Promise((resolve) => {
    const headers = {
      authorization: `Bearer ${key}`,
      ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': '1000' }),
    };
    const request = httpRequest(`${url}/api/servers/${id}/stats`, { method: 'POST', headers, agent: false });
    request.on('error', () => resolve());
    request.write('{"players": ');
    setTimeout(() => {
      request.destroy();
      resolve();
    }, 100);
  });
}

// The origin as operators run it (server/main.ts, request log on): a crash shows as an exit.
const running = suite('a request cannot stop the origin process');
running.before(prepare);

async function withOrigin(test: (origin: OriginProcess) => Promise<void>) {
  const origin = await spawnOrigin(ctx.workspace);
  try {
    await test(origin);
  } finally {
    if (origin.child.exitCode === null) origin.child.kill('SIGTERM');
    await origin.exited;
  }
}

running('a chunked ingestion body over 256 KB gets 413, and the origin keeps answering', () =>
  withOrigin(async (origin) => {
    const { id, ingestKey } = ctx.accounts.publicServer;
    const body = Buffer.alloc(270_000, ' ');
    const status = await new Promise<number>((resolve, reject) => {
      const headers = { authorization: `Bearer ${ingestKey}`, 'transfer-encoding': 'chunked' };
      const request = httpRequest(
        `${origin.url}/api/servers/${id}/stats`,
        { method: 'POST', headers, agent: false },
        (response) => {
          response.resume();
          resolve(response.statusCode!);
        },
      );
      request.on('error', reject);
      request.write(body.subarray(0, 65_536));
      request.end(body.subarray(65_536));
    });
    assert.is(status, 413);
    // The request log's line is written once the connection is gone: after that, still alive.
    await until(
      () => origin.stdout.some((line) => line.includes('"status":413')) || origin.child.exitCode !== null,
      'the 413 was logged',
    );
    assert.is(origin.child.exitCode, null, origin.stderr.join('\n'));
    assert.is((await fetch(`${origin.url}/healthz`)).status, 200);
  }),
);

running('a client that drops an upload midway is one line on stderr, without a stack trace', () =>
  withOrigin(async (origin) => {
    const { id, ingestKey } = ctx.accounts.publicServer;
    for (const chunked of [true, false, true]) await abortedUpload(origin.url, id, ingestKey, chunked);
    await until(
      () => origin.stdout.filter((line) => line.includes('"aborted":true')).length === 3,
      'three aborted uploads logged',
    );
    assert.is((await fetch(`${origin.url}/healthz`)).status, 200);
    const lines = origin.stderr.filter((line) => line.trim() !== '');
    assert.is(lines.length, 1, lines.join('\n'));
    assert.match(
      lines[0]!,
      /^\[request\] POST \/api\/servers\/[0-9a-f-]+\/stats: the client went away before its request was complete/,
    );
    assert.not.match(lines.join('\n'), /Internal|\bat .*:\d+:\d+/);
  }),
);
running.run();

// Random requests over raw sockets at the in-process origin, request log and rate limit on.
type Attempt = {
  method: string;
  path: string;
  headers: [string, string][];
  body: Uint8Array;
  framing: 'length' | 'chunked' | 'none' | 'short-length';
  /** Send this share of the bytes, then destroy the socket; null sends everything. */
  abortAt: number | null;
};

const ANSWER_TIMEOUT_MS = 3000;

/** Writes one request on a fresh connection; the status of the answer, 'aborted', or 'none' when the server closed without one. */
function send(port: number, attempt: Attempt): Promise<number | 'aborted' | 'none' | 'timeout'> {
  const head = [`${attempt.method} ${attempt.path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [name, value] of attempt.headers) head.push(`${name}: ${value}`);
  const { body } = attempt;
  let payload: Buffer;
  if (attempt.framing === 'chunked') {
    head.push('Transfer-Encoding: chunked');
    const half = Math.floor(body.length / 2);
    const chunks = [body.subarray(0, half), body.subarray(half)].filter((chunk) => chunk.length > 0);
    payload = Buffer.concat([
      ...chunks.flatMap((chunk) => [Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]),
      Buffer.from('0\r\n\r\n'),
    ]);
  } else {
    if (attempt.framing === 'length') head.push(`Content-Length: ${body.length}`);
    // Fewer bytes announced than sent: the rest arrives as a second (garbage) request.
    if (attempt.framing === 'short-length') head.push(`Content-Length: ${Math.floor(body.length / 2)}`);
    payload = Buffer.from(body);
  }
  const bytes = Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let settled = false;
    const done = (result: number | 'aborted' | 'none' | 'timeout') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const status = () => {
      const match = /^HTTP\/1\.1 (\d{3})/.exec(Buffer.concat(received).toString('latin1'));
      return match ? Number(match[1]) : 'none';
    };
    const timer = setTimeout(() => done(status() === 'none' ? 'timeout' : status()), ANSWER_TIMEOUT_MS);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', () => done(status()));
    socket.on('close', () => done(status()));
    socket.on('connect', () => {
      if (attempt.abortAt === null) {
        socket.end(bytes);
        return;
      }
      socket.write(bytes.subarray(0, Math.floor(bytes.length * attempt.abortAt)));
      setTimeout(() => done('aborted'), 5);
    });
  });
}

/** Characters a path tail is made of: separators, dots, escapes (valid and not) and a little Unicode, percent-encoded. */
const pathPiece = fc.constantFrom(
  '/',
  '.',
  '..',
  '%2e',
  '%2F',
  '%00',
  '%ZZ',
  '%',
  'a',
  'Z',
  '0',
  '9',
  '-',
  '_',
  '~',
  '%C3%A9',
  '%E2%82%AC',
  '%FF',
  '@',
  ':',
  ';',
  '+',
  '!',
  '*',
  "'",
  '(',
  ')',
  'PaperMC',
  'light',
  'LIGHT',
  '64.png',
  '21',
  '8',
  'latest',
  'download',
  'x'.repeat(300),
);
const tail = fc.array(pathPiece, { maxLength: 8 }).map((pieces) => pieces.join(''));
const queryText = fc.oneof(
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        fc.constantFrom(
          'days',
          'width',
          'height',
          'theme',
          'format',
          'size',
          'variant',
          'download',
          'channel',
          'x',
          '',
        ),
        fc.oneof(
          fc.constantFrom(
            '1',
            '0',
            '-1',
            '365',
            '366',
            '2048',
            '1e3',
            'NaN',
            'dark',
            'Light',
            'webp',
            'svg',
            'true',
            '%00',
            '',
          ),
          fc.string({ maxLength: 12, unit: 'grapheme-ascii' }).map(encodeURIComponent),
        ),
      ),
      { maxLength: 5 },
    )
    .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
  fc.string({ maxLength: 20, unit: 'grapheme-ascii' }).map((text) => `?${text.replace(/[\s#]/g, '')}`),
);
const addressLike = fc.oneof(
  fc.ipV4(),
  fc.ipV4Extended(),
  fc.ipV6(),
  fc.constantFrom(
    'garbage',
    '1.2.3.4:5678',
    '[::1]:80',
    '012.1.2.3',
    '0x7f.1',
    '127.1',
    '',
    'unknown',
    '::ffff:1.2.3.4',
    '2001:db8::1%eth0',
  ),
);
const headerValue = fc.string({ maxLength: 40, unit: 'grapheme-ascii' });

function attempts(accounts: Accounts) {
  const { publicServer, privateServer } = accounts;
  const prefixes = [
    '/',
    '/healthz',
    '/api',
    '/api/openapi.json',
    '/api/plugin-versions',
    '/api/plugin-versions/',
    '/api/plugin-versions/latest/',
    '/api/plugin-versions/download/latest/',
    '/api/plugin-versions/download/',
    '/api/image/brand',
    '/api/image/brand/',
    '/brand/',
    '/brand/papermc/',
    '/api/charts/example',
    '/api/servers/',
    `/api/servers/${publicServer.id}/chart/players`,
    `/api/servers/${publicServer.id.toUpperCase()}/chart/players`,
    `/api/servers/${privateServer.id}/chart/players`,
    `/api/servers/${publicServer.id}/stats`,
    `/api/servers/${publicServer.id}/`,
    '/_site/',
    '/versions/',
  ];
  const authorization = fc.oneof(
    fc.constantFrom(
      `Bearer ${publicServer.ingestKey}`,
      `Bearer ${privateServer.ingestKey}`,
      `Bearer ${accounts.owner}`,
      'Bearer ',
      'Basic Zm9vOmJhcg==',
    ),
    headerValue,
  );
  const header = fc.oneof(
    fc.tuple(fc.constant('Authorization'), authorization),
    fc.tuple(
      fc.constant('X-Forwarded-For'),
      fc.array(addressLike, { minLength: 1, maxLength: 3 }).map((hops) => hops.join(', ')),
    ),
    fc.tuple(
      fc.constantFrom('Range', 'If-Range'),
      fc.oneof(
        fc.constantFrom(
          'bytes=0-5',
          'bytes=-1',
          'bytes=5-1',
          'bytes=0-0,2-3',
          'items=0-5',
          'bytes=99999999-',
          'bytes=',
        ),
        headerValue,
      ),
    ),
    fc.tuple(
      fc.constantFrom(
        'If-None-Match',
        'Accept-Encoding',
        'Accept',
        'Content-Type',
        'Origin',
        'Expect',
        'Cookie',
        'Access-Control-Request-Method',
        'Host',
        'X-Forwarded-Host',
        'X-Forwarded-Proto',
        'Content-Length',
      ),
      headerValue,
    ),
    fc.tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/), headerValue),
  );
  const jsonBody = fc.oneof(
    fc.json({ maxDepth: 3 }),
    fc.integer({ min: -5, max: 2_000_000 }).map((players) => JSON.stringify({ players })),
    fc
      .array(
        fc.record({
          at: fc.oneof(fc.constant(new Date().toISOString()), fc.string({ maxLength: 30 })),
          players: fc.integer({ min: -1, max: 1_000_001 }),
        }),
        { maxLength: 5 },
      )
      .map((samples) => JSON.stringify({ samples })),
  );
  const body = fc.oneof(
    { weight: 3, arbitrary: fc.constant(new Uint8Array(0)) },
    { weight: 3, arbitrary: jsonBody.map((text) => new TextEncoder().encode(text)) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 2048 }) },
    // Over the 256 KiB ingestion limit.
    { weight: 1, arbitrary: fc.integer({ min: 262_145, max: 300_000 }).map((size) => new Uint8Array(size).fill(32)) },
  );
  const framing = fc.constantFrom('length', 'chunked', 'none', 'short-length');
  const abortAt = fc.oneof(
    { weight: 4, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.double({ min: 0.05, max: 0.95, noNaN: true }) },
  );
  const anything: fc.Arbitrary<Attempt> = fc.record({
    method: fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS') },
      { weight: 1, arbitrary: fc.constantFrom('TRACE', 'PROPFIND', 'FOO', 'get', 'G E T') },
    ),
    path: fc.tuple(fc.constantFrom(...prefixes), tail, queryText).map(([prefix, rest, query]) => prefix + rest + query),
    headers: fc.array(header, { maxLength: 5 }),
    body,
    framing,
    abortAt,
  });
  // Ingestion with a valid key gets as far as reading the body: where size limits and aborts bite.
  const ingestion: fc.Arbitrary<Attempt> = fc.record({
    method: fc.constant('POST'),
    path: fc
      .tuple(fc.constantFrom(publicServer.id, privateServer.id, publicServer.id.toUpperCase()), queryText)
      .map(([id, query]) => `/api/servers/${id}/stats${query}`),
    headers: fc
      .tuple(
        fc.constantFrom(`Bearer ${publicServer.ingestKey}`, `Bearer ${privateServer.ingestKey}`),
        fc.array(header, { maxLength: 3 }),
      )
      .map(([key, more]): [string, string][] => [['Authorization', key], ...more]),
    body,
    framing,
    abortAt,
  });
  return fc.array(fc.oneof({ weight: 3, arbitrary: anything }, { weight: 2, arbitrary: ingestion }), {
    minLength: 1,
    maxLength: 3,
  });
}

const fuzz = suite('random requests (fast-check)');
const live = {} as { origin: RunningOrigin; log: RequestLog[]; errors: string[]; consoleError: typeof console.error };
fuzz.before(async () => {
  await prepare();
  live.log = [];
  live.errors = [];
  // Internal errors and guarded failures go to stderr: kept here, so that the test can say none came.
  live.consoleError = console.error;
  console.error = (...args: unknown[]) => {
    live.errors.push(args.map((arg) => (arg instanceof Error ? (arg.stack ?? arg.message) : String(arg))).join(' '));
  };
  live.origin = await startTestOrigin(ctx.workspace, {
    storage: createFileStorage(ctx.workspace.storageDir),
    rateLimit: { limit: 1_000_000, windowSeconds: 900 },
    trustProxy: ['127.0.0.1', '::1'],
    // As `npm start` runs (PUBLISH=on): random publishing requests meet the token check, not a 503.
    publishing: { maxBytes: 1024 * 1024, uploadsDir: `${ctx.workspace.storageDir}/uploads` },
    log: (entry) => live.log.push(entry),
    logger: NO_LOG,
  });
});
fuzz.after(async () => {
  console.error = live.consoleError;
  await live.origin.close();
  await ctx.workspace.remove();
});

fuzz('no request stops the origin or earns a 500; /healthz answers after every batch', async () => {
  const port = Number(new URL(live.origin.url).port);
  const started = Date.now();
  await fc.assert(
    fc.asyncProperty(attempts(ctx.accounts), async (batch) => {
      const results = await Promise.all(batch.map((attempt) => send(port, attempt)));
      for (const [i, result] of results.entries()) {
        if (typeof result === 'number' && result >= 500)
          throw new Error(`${result} for ${JSON.stringify({ ...batch[i], body: batch[i]!.body.length })}`);
      }
      const health = await fetch(`${live.origin.url}/healthz`, { signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) });
      await health.arrayBuffer();
      if (health.status !== 200) throw new Error(`/healthz answered ${health.status}`);
    }),
    { numRuns: 200, endOnFailure: true, plugins: [fc.interruptAfterTimeLimit(35_000)] },
  );
  // Answers that reached no client (aborted ones) are in the log: none of them a 500 either.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const failed = live.log.filter((entry) => entry.status >= 500);
  assert.equal(failed, [], 'no logged answer was a 5xx');
  // A client that hangs up midway is not an error: one line at most, never a stack trace.
  const errors = live.errors.filter(
    (line) => !/^\[request\] POST \S+: the client went away before its request was complete/.test(line),
  );
  assert.equal(errors, [], 'nothing but client aborts reported on stderr');
  assert.ok(live.log.length > 200, `the log saw the requests (${live.log.length})`);
  assert.ok(Date.now() - started < 45_000);
});
fuzz.run();

// Issue 27: hostile changelogs and names. Each is refused with a clear message where it enters, or
// accepted, and then every output holds: the changelog renders (or shows as text) in bounded time,
// every feed parses as strict XML, nginx -t accepts the config, and headers are valid.
const hostilePiece = fc.constantFrom(
  '>',
  '> ',
  '- ',
  '* ',
  '1. ',
  '  ',
  '\n',
  '\n\n',
  '**',
  '_',
  '*',
  '[',
  '](',
  ')',
  '![',
  '`',
  '<',
  '&amp;',
  ']]>',
  '$',
  '$host',
  '${x}',
  '"',
  "'",
  '{',
  '}',
  ';',
  '#',
  '\\',
  'word',
  ' ',
  '\u0000',
  '\u0007',
  '\u001b',
  '\u0085',
  '\u202e',
  '\u2066',
  '\u200b',
  '\ufeff',
  '\u2028',
  '\ud800',
  '\uffff',
  '👩\u200d💻',
  'é',
);
/** Hostile text: pieces, sometimes one repeated thousands of times (deep nesting, long emphasis runs). */
const hostileText = (maxPieces: number, maxRepeat: number) =>
  fc.oneof(
    fc.array(hostilePiece, { maxLength: maxPieces }).map((pieces) => pieces.join('')),
    fc
      .tuple(
        fc.array(hostilePiece, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: maxRepeat }),
        hostilePiece,
      )
      .map(([unit, times, end]) => unit.join('').repeat(times) + end),
  );

const hostile = suite('hostile changelogs and names (fast-check)');
hostile('a changelog is refused with one line, or renders within its limits into a strictly parsed feed', async () => {
  const workspace = await makeWorkspace({ build: false });
  const catalog = await loadCatalog(workspace.dataDir);
  await workspace.remove();
  const cpu = () => (process.cpuUsage().user + process.cpuUsage().system) / 1000;
  let accepted = 0;
  await fc.assert(
    fc.property(hostileText(400, 20_000), (text) => {
      const markdown = text.slice(0, 65_536);
      const parsed = ChangelogMarkdown.safeParse(markdown);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) assert.not.match(issue.message, /[\u0000-\u001f\u202a-\u202e]/);
        return;
      }
      const refusal = acceptChangelog(markdown, cpu);
      if (refusal !== undefined) {
        assert.not.match(refusal, /\n/);
        return; // never rendered for anyone: what is refused here is not released
      }
      accepted++;
      // Rendered again, within the product's own clock (CPU time, not wall time) and 2.5 times its limit.
      const started = cpu();
      const html = changelogHtml(markdown);
      assert.ok(cpu() - started < 5000, `${Math.round(cpu() - started)} ms of CPU to render`);
      assert.not.match(html, /<script|onerror|javascript:/i);
      const [first, ...rest] = catalog.versions;
      const feed = releaseFeed(
        createCatalog([{ ...first!, changelog: markdown }, ...rest], [...catalog.users.values()]),
        'https://e.org',
        FEED_PAGES,
      );
      parseXmlStrictly(feed, JSON.stringify(markdown.slice(0, 80)));
    }),
    { numRuns: 150, endOnFailure: true, plugins: [fc.interruptAfterTimeLimit(60_000)] },
  );
  assert.ok(accepted > 10, `${accepted} changelogs accepted: the property saw both sides`);
});

/** The fields a hostile name is tried in. */
const NAME_FIELDS = ['fileName', 'minecraftVersion', 'proxyVersion', 'createdBy', 'nickname', 'reason'] as const;
/** Names every field takes that still hold what feeds, headers and nginx.conf must escape. */
const ACCEPTED_NAMES: [(typeof NAME_FIELDS)[number], string][] = [
  ...[
    'Plugin "quoted"; name=x',
    'naïve ünïcödé 插件',
    '100% off & <b>',
    'a\\b $HOME `id`',
    "it's {braces}",
    'semi;colon,comma',
  ].map((text) => ['fileName', text] as [(typeof NAME_FIELDS)[number], string]),
  ...(['createdBy', 'nickname', 'reason'] as const).flatMap((field) =>
    ['Bob "the" <builder>', 'Zoë & co', '50% ; drop', 'x]]>y', "O'Brien", 'tab-free {x}'].map(
      (text) => [field, text] as [(typeof NAME_FIELDS)[number], string],
    ),
  ),
];

hostile('a name or version is refused naming its field, or every feed, header and nginx.conf holds it', async () => {
  const workspace = await makeWorkspace({ build: false });
  const catalog = await loadCatalog(workspace.dataDir);
  await workspace.remove();
  const [first, ...rest] = catalog.versions;
  // `reason`: a withdrawal's (issue 29), up to 500 characters, shown in the feeds' summary and content.
  const routes: Record<string, RouteEntry> = {};
  let accepted = 0;
  const check = (field: (typeof NAME_FIELDS)[number], text: string) => {
    const value = field === 'fileName' ? `${text.slice(0, 190)}.jar` : text.slice(0, field === 'reason' ? 500 : 32);
    const { sha512: _sha512, changelog: _changelog, ...record } = first!;
    const withdrawn = { reason: value, at: record.createdAt, by: 'hostile' };
    const changed = field === 'reason' ? { withdrawn } : { [field]: value };
    const parsed =
      field === 'nickname'
        ? UserProfile.safeParse({ id: 'u', username: 'hostile', nickname: value })
        : PluginVersionRecord.safeParse({ ...record, createdBy: 'hostile', ...changed });
    if (!parsed.success) {
      assert.ok(
        parsed.error.issues.some((issue) => issue.path[0] === (field === 'reason' ? 'withdrawn' : field)),
        field,
      );
      for (const issue of parsed.error.issues) assert.not.match(issue.message, /[\u0000-\u001f\u202a-\u202e]/);
      return;
    }
    accepted++;
    const version = { ...first!, createdBy: 'hostile', ...(field === 'nickname' ? {} : changed) };
    const users = [
      ...catalog.users.values(),
      { id: 'u', username: 'hostile', nickname: field === 'nickname' ? value : null },
    ];
    const feed = parseXmlStrictly(
      releaseFeed(createCatalog([version, ...rest], users), 'https://e.org', FEED_PAGES),
      `${field}: ${JSON.stringify(value)}`,
    );
    if (field === 'reason') {
      // The reason reads back as written, in the summary and the content alike.
      const [summary, content] = ['summary', 'content'].map((name) =>
        htmlText(feed.getElementsByTagNameNS('http://www.w3.org/2005/Atom', name)[0]!.textContent ?? ''),
      );
      assert.ok(summary!.startsWith(`Withdrawn: ${value} (`), JSON.stringify(value));
      assert.ok(content!.startsWith(`<p><strong>Withdrawn</strong>: ${value}</p>`), JSON.stringify(value));
    }
    if (field !== 'fileName') return;
    const disposition = dispositionHeader('attachment', value);
    validateHeaderValue('content-disposition', disposition);
    assert.is(parseDisposition(disposition).parameters.filename, value);
    // Every other path has capitals: nginx's maps ignore case, its exact check must not.
    const index = Object.keys(routes).length;
    routes[`/api/plugin-versions/download/${index % 2 ? 'Plugin' : 'plugin'}-${index}-x`] = {
      file: `files/${FILE_SHA256}.jar`,
      status: 200,
      size: 1,
      headers: {
        'content-type': 'application/java-archive',
        'content-disposition': disposition,
        etag: `"${FILE_SHA256}"`,
      },
    };
  };
  // First, whatever the time limit leaves of the drawn ones on a loaded machine: enough accepted
  // names for the checks after the property, and some in every field the feeds show.
  for (const [field, text] of ACCEPTED_NAMES) check(field, text);
  await fc.assert(fc.property(fc.constantFrom(...NAME_FIELDS), hostileText(12, 40), check), {
    numRuns: 300,
    endOnFailure: true,
    plugins: [fc.interruptAfterTimeLimit(30_000)],
  });
  assert.ok(
    accepted > 20 && Object.keys(routes).length > 5,
    `${accepted} names accepted, ${Object.keys(routes).length} file names`,
  );
  // Every accepted file name in one nginx.conf, checked by nginx itself. export-static's _headers
  // stays one line per rule or header and carries no name: a download's Content-Disposition differs
  // per path, which its per-endpoint rules cannot hold (docs/deployment.md: not sent by static hosts).
  const { headers, redirects, notCarried } = staticLayoutConfigs(routes, 'https://o.example');
  for (const line of [...headers.split('\n'), ...redirects.split('\n')].filter((l) => l && !l.startsWith('#')))
    assert.match(line, /^(\S+( \S+)*|  [A-Z][A-Za-z-]*: [^\u0000-\u001f\u007f]+)$/, JSON.stringify(line));
  for (const entry of Object.values(routes))
    assert.not.ok(headers.includes(entry.headers['content-disposition']!), entry.headers['content-disposition']);
  assert.not.match(headers, /content-disposition/i);
  assert.ok(notCarried.get('/api/plugin-versions/download/{id}')?.has('content-disposition'));
  const options = {
    origins: ['127.0.0.1:3000'],
    listen: '127.0.0.1:8080',
    realIpFrom: [],
    originUrl: 'https://o.example',
    treeDir: '/srv/t',
    rateLimit: null,
  };
  const { conf: text, included } = nginxFiles(routes, options);
  await assertNginxAccepts(text, included);
  await assertNginxServes(routes, options);
});
hostile.run();

/** The one file the hostile names' routes share, and its sha256. */
const FILE_BYTES = 'PK';
const FILE_SHA256 = 'fcab7fcc2b4cffd9bb45003bfc2e468a04ef6f77ca8200a7341f027631584d25';

/**
 * Issue 32: the names now reach nginx through its included maps, where nginx expands variables in
 * values: nginx serves each route's Content-Disposition and ETag exactly as the manifest has them,
 * and a request in other letter case is not answered from the file.
 */
async function assertNginxServes(routes: Record<string, RouteEntry>, options: Parameters<typeof nginxFiles>[1]) {
  const program = findProgram('nginx');
  if (!program) return console.warn('nginx not installed: the hostile names are not served');
  const treeDir = await mkdtemp(join(tmpdir(), 'depot-hostile-tree-'));
  const port = await freePort();
  // The origin behind it answers 404 to all: what nginx forwards is then told apart from what it serves.
  const origin = createServer((request, response) =>
    request.url === '/healthz'
      ? response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","tree":"hostile"}')
      : response.writeHead(404).end(),
  );
  await new Promise<void>((listening) => origin.listen(0, '127.0.0.1', listening));
  const originAddress = `127.0.0.1:${(origin.address() as { port: number }).port}`;
  try {
    await mkdir(join(treeDir, 'files'));
    await writeFile(join(treeDir, 'files', `${FILE_SHA256}.jar`), FILE_BYTES);
    const files = nginxFiles(routes, { ...options, treeDir, listen: `127.0.0.1:${port}`, origins: [originAddress] });
    for (const [name, body] of Object.entries(files.included)) await writeFile(join(treeDir, name), body);
    await writeFile(join(treeDir, 'nginx.conf'), files.conf);
    const nginx = await startNginx(program, join(treeDir, 'nginx.conf'), port);
    try {
      // Plain requests: these made-up routes are no answers of the API document the suite's fetch checks.
      for (const [path, route] of Object.entries(routes)) {
        const answer = await plainGet(nginx.url + path);
        assert.is(answer.body, FILE_BYTES, path);
        for (const name of ['content-disposition', 'etag', 'content-type'])
          assert.is(answer.headers[name], route.headers[name], `${path}: ${name}`);
        const other = path.replace(/plugin-/i, (word) => (word[0] === 'P' ? 'plugin-' : 'Plugin-'));
        assert.is((await plainGet(nginx.url + other)).status, 404, `${other}: another letter case goes to the origin`);
      }
    } finally {
      await nginx.stop();
    }
  } finally {
    origin.close();
    await rm(treeDir, { recursive: true, force: true });
  }
}

function plainGet(url: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((done, fail) =>
    httpRequest(url, { timeout: 10_000 }, (response) => {
      let body = '';
      response.setEncoding('latin1');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => done({ status: response.statusCode!, headers: response.headers, body }));
    })
      .on('error', fail)
      .end(),
  );
}
