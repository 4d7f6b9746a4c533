import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ROOT } from './helpers.ts';

let source: Promise<string> | undefined;

/**
 * axe-core's violations on the page as it is now, one "rule: element" line each, for a readable
 * failure. axe is evaluated into the page by the browser's debugging protocol, which the site's CSP
 * (script-src 'self') does not govern.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(await (source ??= readFile(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8')));
  return page.evaluate(async () => {
    type AxeResults = { violations: { id: string; nodes: { target: string[] }[] }[] };
    const axe = (window as unknown as { axe: { run: (context: Document) => Promise<AxeResults> } }).axe;
    const results = await axe.run(document);
    return results.violations.flatMap((v) => v.nodes.map((node) => `${v.id}: ${node.target.join(' ')}`));
  });
}
