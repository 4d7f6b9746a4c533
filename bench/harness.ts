import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { findCommand } from './nginx.ts';
import { once } from 'node:events';
import { resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');

/** Starts a server process and waits until it answers `probe` (bounded), then hands back a stopper. */
export async function startProcess(command: string, args: string[], probe: string, env: NodeJS.ProcessEnv = {}) {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}`);
    const ok = await fetch(probe).then((r) => r.arrayBuffer().then(() => r.ok), () => false);
    if (ok) return { child, stop: () => stopProcess(child) };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stopProcess(child);
  throw new Error(`${command} did not answer ${probe} within 20 s`);
}

export async function stopProcess(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await once(child, 'exit');
  clearTimeout(timer);
}

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

export const WRK = findCommand('wrk');

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
