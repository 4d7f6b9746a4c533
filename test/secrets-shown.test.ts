import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newSecret } from '../server/http/auth.ts';
import { makeWorkspace, rawRequest, spawnOrigin, until, type OriginProcess, type Workspace } from './helpers.ts';

// Issue 42 item 5: a secret the depot issued, pasted into a request however it is spelled
// (percent escapes in either letter case, escapes of escapes, text before and after it), is in no
// line the origin writes (its request log and warnings, as server/main.ts writes them) and in no
// answer. Real secrets of each kind, against the origin as operators run it.

const ctx = {} as { workspace: Workspace; origin: OriginProcess };

const KINDS = ['dpp', 'dpt', 'dpk', 'dpw'] as const;

/** One character as a client might send it: itself, a percent escape (upper or lower hex), or an escape of that escape. */
const SPELLINGS = ['as-is', 'upper', 'lower', 'twice'] as const;
function spell(char: string, how: (typeof SPELLINGS)[number]): string {
  const hex = char.charCodeAt(0).toString(16).padStart(2, '0');
  if (how === 'upper') return `%${hex.toUpperCase()}`;
  if (how === 'lower') return `%${hex.toLowerCase()}`;
  if (how === 'twice') return `%25${hex.toUpperCase()}`;
  return char;
}

/** Every percent escape undone, as often as it takes: what a reader of the line could make of it. */
function decodedFully(text: string): string {
  let decoded = text;
  for (let round = 0; round < 8; round++) {
    const next = decoded.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    if (next === decoded) break;
    decoded = next;
  }
  return decoded;
}

const PATHS = [
  (x: string) => `/api/plugin-versions/${x}`,
  (x: string) => `/api/no-such-endpoint/${x}`,
  (x: string) => `/api/plugin-versions/${x}/downloads?ref=${x}`,
  (x: string) => `/api/latest/PaperMC/${x}`,
];

const shown = suite('a secret pasted into a request');
shown.before(async () => {
  ctx.workspace = await makeWorkspace();
  ctx.origin = await spawnOrigin(ctx.workspace, { LOG_REQUESTS: 'on' });
});
shown.after(async () => {
  ctx.origin.child.kill('SIGTERM');
  await ctx.origin.exited;
  await ctx.workspace.remove();
});

shown('is in no log line and no answer, however it is spelled', async () => {
  const secrets: string[] = [];
  let sent = 0;
  const requestLines = () => ctx.origin.stdout.filter((line) => line.includes('"method"')).length;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...KINDS),
      fc.array(fc.constantFrom(...SPELLINGS), { minLength: 47, maxLength: 47 }),
      fc.stringMatching(/^[A-Za-z0-9.-]{0,6}$/),
      fc.stringMatching(/^[A-Za-z0-9.-]{0,6}$/),
      fc.nat(PATHS.length - 1),
      async (kind, spellings, before, after, path) => {
        const secret = newSecret(kind);
        secrets.push(secret);
        const pasted = before + [...secret].map((char, i) => spell(char, spellings[i]!)).join('') + after;
        const answer = await rawRequest(ctx.origin.url + PATHS[path]!(pasted));
        sent++;
        const body = decodedFully(answer.body.toString());
        assert.not.ok(body.includes(secret.slice(4)), `${answer.status} ${body}`);
      },
    ),
    { numRuns: 120 },
  );
  // The log is written off the request path: every request's line, then every line is read.
  await until(
    () => requestLines() >= sent,
    () => `${sent} request lines, not ${requestLines()}`,
    30_000,
  );
  const lines = [...ctx.origin.stdout, ...ctx.origin.stderr].map(decodedFully);
  for (const secret of secrets)
    for (const line of lines) assert.not.ok(line.includes(secret.slice(4)), `${secret.slice(0, 4)}... in ${line}`);
  // The kind stays, to say what was pasted.
  assert.ok(
    lines.some((line) => /dp[ptkw]_\[redacted\]/i.test(line)),
    'a redacted secret is shown as such',
  );
});

shown.run();
