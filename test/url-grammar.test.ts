import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { PathRule } from '../server/http/path-rule.ts';
import { openApiDocument } from '../server/openapi.ts';
import { URL_GRAMMAR } from '../server/url-grammar.ts';
import { makeWorkspace, type Workspace } from './helpers.ts';

/** Every rule of the grammar, named `capability.rule`. */
const RULES: [string, PathRule][] = Object.entries(URL_GRAMMAR).flatMap(([capability, rules]) =>
  Object.entries(rules).map(([name, rule]): [string, PathRule] => [`${capability}.${name}`, rule]),
);

const rulesMatching = (path: string) => RULES.filter(([, rule]) => rule.match(path)).map(([name]) => name);

/** The paths that no rule or more than one rule matches, with the rules that did. */
function notMatchedOnce(paths: Iterable<string>, matching: (path: string) => string[]) {
  const wrong: Record<string, string[]> = {};
  for (const path of paths) {
    const names = matching(path);
    if (names.length !== 1) wrong[path] = names;
  }
  return wrong;
}

const documented = suite('the OpenAPI document');

/** A template with its parameters' names left out: the document and the routes may name them differently. */
const unnamed = (template: string) => template.replace(/\{[^}]+\}/g, '{}');

documented('each documented path is the template of exactly one rule', () => {
  const paths = Object.keys(openApiDocument().paths ?? {});
  assert.ok(paths.length > 20);
  const byTemplate = (path: string) =>
    RULES.filter(([, rule]) => unnamed(rule.template) === unnamed(path)).map(([name]) => name);
  assert.equal(notMatchedOnce(paths, byTemplate), {});
});

documented.run();

const built = suite('a built tree') as ReturnType<typeof suite<{ workspace: Workspace; routes: string[] }>>;

built.before(async (ctx) => {
  // With the site: its pages are precomputed routes too.
  ctx.workspace = await makeWorkspace({ site: true });
  const treeDir = await realpath(join(ctx.workspace.distDir, 'current'));
  const manifest = JSON.parse(await readFile(join(treeDir, 'manifest.json'), 'utf8')) as { routes: object };
  ctx.routes = Object.keys(manifest.routes);
});

built.after((ctx) => ctx.workspace.remove());

built('each precomputed route is matched by exactly one rule', (ctx) => {
  assert.ok(ctx.routes.some((path) => path.startsWith('/versions/')));
  assert.ok(ctx.routes.some((path) => path.includes('?')));
  assert.equal(notMatchedOnce(ctx.routes, rulesMatching), {});
});

built('every rule but the live ones has a precomputed route', (ctx) => {
  const live = new Set([
    'versions.byHashUpdate', // a POST: its answer depends on the body
    'versions.updateCheck', // precomputed for the newest versions only; the demo data has some, kept here as live for smaller data
    'downloads.counts',
    'charts.players',
    'charts.stats',
    'charts.chartUrls',
    'badges.downloads',
    'badges.players',
    'operations.health',
  ]);
  const used = new Set(ctx.routes.flatMap(rulesMatching));
  const unused = RULES.map(([name]) => name).filter((name) => !used.has(name) && !live.has(name));
  assert.equal(unused, []);
});

built.run();

const roundTrip = suite('builders and matchers');

/** Parameters drawn from each of a rule's shapes. */
const paramsOf = (rule: PathRule) =>
  fc.record(
    Object.fromEntries(
      Object.entries(rule.shapes).map(([name, shape]) => [name, fc.stringMatching(new RegExp(`^(?:${shape})$`))]),
    ),
  );

roundTrip('a built path matches its rule alone, with the same parameters', () => {
  for (const [name, rule] of RULES) {
    fc.assert(
      fc.property(paramsOf(rule), (params) => {
        const path = rule.build(params);
        assert.equal(rule.match(path), { ...params }, `${name}: ${path}`);
        assert.equal(rulesMatching(path), [name], path);
        // The query string is not the path's.
        assert.equal(rule.match(`${path}?channel=beta`), { ...params }, `${name}: ${path}?channel=beta`);
      }),
      { numRuns: 50 },
    );
  }
});

roundTrip.run();
