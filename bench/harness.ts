import { execFileSync } from 'node:child_process';
import autocannon from 'autocannon';
import { findProgram } from '../test/processes.ts';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One line: a figure, its same-run baseline, and their ratio (the only comparison that holds here). */
export function report(name: string, figure: number, unit: string, baselineName: string, baseline: number, target?: string) {
  const ratio = figure / baseline;
  console.log(
    `${name.padEnd(34)} ${fmt(figure).padStart(9)} ${unit.padEnd(6)} | ${baselineName.padEnd(24)} ${fmt(baseline).padStart(9)} ${unit.padEnd(6)} | ratio ${ratio.toFixed(2)}${target ? `  (target ${target})` : ''}`,
  );
}

export const fmt = (n: number) => (n >= 100 ? Math.round(n).toString() : n >= 1 ? n.toFixed(2) : n.toFixed(3));

export const WRK = findProgram('wrk');

/**
 * Requests/s of one URL. wrk (Debian's package) when installed: a C client leaves the second core
 * to the server. Otherwise autocannon, whose JavaScript client saturates first on large bodies.
 */
export async function load(url: string, connections: number, seconds: number): Promise<number> {
  if (WRK) {
    const out = execFileSync(WRK, ['-t1', `-c${connections}`, `-d${seconds}s`, url], { encoding: 'utf8' });
    if (/Non-2xx|Socket errors/.test(out)) throw new Error(`${url}: ${out}`);
    return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  }
  const result = await autocannon({ url, connections, duration: seconds, pipelining: 1 });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}
