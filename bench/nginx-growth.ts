// nginx's cost of a tree's generated config: bytes, `nginx -t`, a reload, a worker's memory. The
// growth bench measures it per version count (issue 32: nginx.conf must not grow with versions).
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standaloneNginxConfig } from '../build/deploy-configs.ts';
import { findProgram, freePort, stopProcess } from '../test/processes.ts';

export type NginxFigures = {
  /** nginx.conf alone, and the files it includes (the route maps). */
  confBytes: number;
  includedBytes: number;
  /** `nginx -t`: wall clock, CPU (user + system) and peak memory. */
  checkMs: number;
  checkCpuMs: number;
  checkRssKb: number;
  /** From `nginx -s reload` to the new worker in place of the old one. */
  reloadMs: number;
  /** A worker's resident memory after the reload (the parsed config, shared with the master). */
  workerRssKb: number;
};

const TIME = '/usr/bin/time';
const WAIT_MS = 300_000;

/** Runs nginx with `treeDir`'s nginx.conf (its listen moved to a free loopback port) and measures it. */
export async function measureNginx(treeDir: string): Promise<NginxFigures> {
  const nginx = findProgram('nginx');
  if (!nginx) throw new Error('measureNginx: nginx is not installed');
  const conf = await readFile(join(treeDir, 'nginx.conf'), 'utf8');
  let includedBytes = 0;
  for (const [, file] of conf.matchAll(/^\s*include "?([^";\s]+)"?;$/gm)) includedBytes += (await stat(file!)).size;
  const dir = await mkdtemp(join(tmpdir(), 'depot-nginx-growth-'));
  try {
    const port = await freePort();
    await writeFile(join(dir, 'depot.conf'), conf.replace(/^ {2}listen .*;$/m, `  listen 127.0.0.1:${port};`));
    await writeFile(join(dir, 'nginx.conf'), standaloneNginxConfig(dir, join(dir, 'depot.conf'), 1));
    const args = ['-p', dir, '-c', join(dir, 'nginx.conf')];
    const check = await timed(nginx, ['-t', '-q', ...args]);
    const master = spawn(nginx, [...args, '-g', 'daemon off;'], { stdio: 'ignore' });
    try {
      await until(async () => (await workers(master.pid!)).length > 0 && (await answers(port)), 'nginx started');
      const [old] = await workers(master.pid!);
      const started = performance.now();
      await run(nginx, [...args, '-s', 'reload']);
      await until(async () => {
        const now = await workers(master.pid!);
        return now.length > 0 && !now.includes(old!);
      }, 'the reload replaced the worker');
      const reloadMs = performance.now() - started;
      const [worker] = await workers(master.pid!);
      return {
        confBytes: Buffer.byteLength(conf),
        includedBytes,
        checkMs: check.ms,
        checkCpuMs: check.cpuMs,
        checkRssKb: check.rssKb,
        reloadMs,
        workerRssKb: await rssKb(worker!),
      };
    } finally {
      await stopProcess(master);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A command's wall clock, and (through /usr/bin/time where installed) its CPU time and peak memory. */
async function timed(program: string, args: string[]) {
  const measured = existsSync(TIME);
  const started = performance.now();
  const out = await run(measured ? TIME : program, measured ? ['-f', 'depot %U %S %M', program, ...args] : args);
  const ms = performance.now() - started;
  const [, user, system, rss] = /depot ([\d.]+) ([\d.]+) (\d+)/.exec(out) ?? [];
  return { ms, cpuMs: user ? (Number(user) + Number(system)) * 1000 : NaN, rssKb: rss ? Number(rss) : NaN };
}

function run(program: string, args: string[]): Promise<string> {
  return new Promise((done, fail) =>
    execFile(program, args, { timeout: WAIT_MS }, (error, stdout, stderr) =>
      error ? fail(new Error(`${program} ${args.join(' ')}: ${stderr || error.message}`)) : done(stdout + stderr),
    ),
  );
}

/** The master's worker processes (its children). */
async function workers(master: number): Promise<number[]> {
  const text = await readFile(`/proc/${master}/task/${master}/children`, 'utf8').catch(() => '');
  return text.split(' ').filter(Boolean).map(Number);
}

async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
}

const answers = (port: number) =>
  fetch(`http://127.0.0.1:${port}/_depot/nothing`, { signal: AbortSignal.timeout(2000) }).then(
    () => true,
    () => false,
  );

async function until(ready: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`measureNginx: ${what} not within ${WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// `node --import tsx bench/nginx-growth.ts <treeDir>...`: the figures of each tree, one JSON line each.
if (import.meta.url === `file://${process.argv[1]}`)
  for (const treeDir of process.argv.slice(2))
    console.log(JSON.stringify({ treeDir, ...(await measureNginx(treeDir)) }));
