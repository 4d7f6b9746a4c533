import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { runBuild } from '../build/build.ts';
import { releaseJar } from '../build/changes/release.ts';
import { makePluginJar } from '../build/plugin-jar.ts';
import { findProgram } from '../test/processes.ts';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One line: a figure, its same-run baseline, and their ratio (the only comparison that holds here). */
export function report(
  name: string,
  figure: number,
  unit: string,
  baselineName: string,
  baseline: number,
  target?: string,
) {
  const ratio = figure / baseline;
  console.log(
    `${name.padEnd(34)} ${fmt(figure).padStart(9)} ${unit.padEnd(6)} | ${baselineName.padEnd(24)} ${fmt(baseline).padStart(9)} ${unit.padEnd(6)} | ratio ${ratio.toFixed(2)}${target ? `  (target ${target})` : ''}`,
  );
}

export const fmt = (n: number) => (n >= 100 ? Math.round(n).toString() : n >= 1 ? n.toFixed(2) : n.toFixed(3));

/**
 * A valid plugin JAR of about `size` bytes (its filler stored, so its size is what we ask). Its
 * descriptors back every software the bench releases for (a release checks them): Folia's key, Velocity's file.
 */
export function pluginJar(label: string, size = 0): Uint8Array {
  return makePluginJar({
    files: {
      'plugin.yml': `name: Bench\nversion: 1.0.0\nmain: org.example.Bench\nfolia-supported: true\n# ${label}\n`,
      'velocity-plugin.json': JSON.stringify({ id: 'bench', main: 'org.example.BenchVelocity' }),
    },
    filler: size,
  });
}

/** The workspace built, then a 5 MB JAR (as plugins weigh) released into it: that version's id. */
export async function buildWithBigJar(ws: { dataDir: string; distDir: string; dir: string }): Promise<string> {
  const file = join(ws.dir, 'Big-5MB.jar');
  await writeFile(file, pluginJar('big', 5 * 1024 * 1024));
  await runBuild(ws);
  const big = await releaseJar(
    { file, version: '9.0.0', java: '21', software: ['Velocity'], by: 'bench' },
    ws,
    new Date(),
  );
  return big.id;
}

export const WRK = findProgram('wrk');
const execFileAsync = promisify(execFile);

/**
 * Requests/s of one URL. wrk (Debian's package) when installed: a C client leaves the second core
 * to the server. Otherwise autocannon, whose JavaScript client saturates first on large bodies.
 */
export async function load(url: string, connections: number, seconds: number): Promise<number> {
  if (WRK) return (await runWrk([`-c${connections}`, `-d${seconds}s`, url])).requestsPerSecond;
  const result = await autocannon({ url, connections, duration: seconds, pipelining: 1 });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

/** One wrk run on one thread (`args`: its options, the URL, then any script arguments): requests/s and how many; refuses non-2xx answers and socket errors. */
export async function runWrk(args: string[]): Promise<{ requestsPerSecond: number; requests: number }> {
  const { stdout } = await execFileAsync(WRK!, ['-t1', ...args], { encoding: 'utf8' });
  if (/Non-2xx|Socket errors/.test(stdout)) throw new Error(`wrk ${args.join(' ')}: ${stdout}`);
  return {
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]),
    requests: Number(/(\d+) requests in/.exec(stdout)?.[1]),
  };
}

export type CpuFigures = { requestsPerSecond: number; cpuMicrosPerRequest: number };

/**
 * CPU time per request of the server process `pid`: `count` requests to `url`, and the process's
 * user + system time (all its threads) from /proc/<pid>/stat before and after. Unlike requests/s,
 * this does not depend on what the client and the other processes do with the cores meanwhile.
 * autocannon, as wrk cannot stop at a request count (its Lua `thread:stop()` stops sending, but
 * wrk still waits out its duration, so its requests/s would be wrong).
 */
export async function measureCpu(pid: number, url: string, connections: number, count: number): Promise<CpuFigures> {
  const before = cpuMicros(pid);
  const result = await autocannon({ url, connections, amount: count, pipelining: 1 });
  const used = cpuMicros(pid) - before;
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return {
    requestsPerSecond: result.requests.total / result.duration,
    cpuMicrosPerRequest: used / result.requests.total,
  };
}

/** Linux's clock ticks per second, the unit of utime and stime in /proc/<pid>/stat. */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100;
  } catch {
    return 100;
  }
})();

export function cpuMicros(pid: number): number {
  // Fields 14 and 15 (utime, stime) in proc(5); the command name before them may contain spaces.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
}
