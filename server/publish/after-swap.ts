import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { Log } from '../helpers/log.ts';

/** How AFTER_SWAP went: ok when it exited 0; exitCode null when it could not start, was killed or timed out. */
export type AfterSwapResult = { ok: boolean; exitCode: number | null };

/** An AFTER_SWAP still running after this long is killed: a publish's answer waits for it. */
const AFTER_SWAP_TIMEOUT_MS = 10 * 60_000;

/** After SIGTERM (rsync removes its partial files on it), the command's processes get this long before SIGKILL. */
const KILL_GRACE_MS = 5_000;

/** A line of output is logged at most this long: a command printing without newlines must not grow memory. */
const MAX_LINE_CHARS = 4_096;

/**
 * Issue 30 item 5: runs the operator's AFTER_SWAP with `/bin/sh -c` once a publish has swapped in
 * `treeDir` (<DIST_DIR>/trees/<name>), with DEPOT_TREE and DIST_DIR in its environment, so that it
 * can copy the new tree where it is served (docs/deployment.md). Its output is logged line by line
 * (info), and how it ended (warn when it failed), never the command or its environment (either may
 * hold a secret). Never throws.
 */
export function runAfterSwap(
  command: string,
  treeDir: string,
  log: Log,
  timeoutMs = AFTER_SWAP_TIMEOUT_MS,
): Promise<AfterSwapResult> {
  const started = performance.now();
  return new Promise((resolveResult) => {
    let settled = false;
    const settle = (result: AfterSwapResult, line: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(killer);
      if (result.ok) log.info(line);
      else log.warn(line);
      resolveResult(result);
    };
    let timer: NodeJS.Timeout | undefined;
    let killer: NodeJS.Timeout | undefined;
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      // The rest of the origin's environment is inherited, as a shell's would be: PATH, SSH_AUTH_SOCK.
      const env = { ...process.env, DEPOT_TREE: treeDir, DIST_DIR: resolve(treeDir, '..', '..') };
      // Its own process group: a timeout ends the shell and whatever it started (rsync, ssh).
      child = spawn('/bin/sh', ['-c', command], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    } catch (error) {
      return settle(
        { ok: false, exitCode: null },
        `[after-swap] AFTER_SWAP could not start: ${(error as Error).message}`,
      );
    }
    const { stdout, stderr } = child;
    logLines(stdout, (line) => log.info(`[after-swap] ${line}`));
    logLines(stderr, (line) => log.info(`[after-swap] stderr: ${line}`));
    let timedOut = false;
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // The group has already ended.
      }
    };
    timer = setTimeout(() => {
      timedOut = true;
      killGroup('SIGTERM');
      killer = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
    }, timeoutMs);
    const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
    child.on('error', (error) =>
      settle({ ok: false, exitCode: null }, `[after-swap] AFTER_SWAP could not start: ${error.message}`),
    );
    // close, not exit: every line of output is logged before the answer says how it went.
    child.on('close', (code, signal) => {
      const exitCode = timedOut ? null : code;
      const how = timedOut
        ? `killed after ${timeoutMs / 1000} s`
        : `${signal ? `ended by ${signal}` : `exited ${code}`} after ${seconds()} s`;
      settle({ ok: exitCode === 0, exitCode }, `[after-swap] AFTER_SWAP ${how}`);
    });
  });
}

/** Calls `line` for each line of `stream` (the last one even without a newline); a longer one than MAX_LINE_CHARS in pieces. */
function logLines(stream: Readable, line: (text: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (pending + chunk).split('\n');
    pending = parts.pop()!;
    for (const part of parts) line(part.slice(0, MAX_LINE_CHARS));
    if (pending.length > MAX_LINE_CHARS) {
      line(pending.slice(0, MAX_LINE_CHARS));
      pending = '';
    }
  });
  stream.on('end', () => {
    if (pending) line(pending);
  });
}
