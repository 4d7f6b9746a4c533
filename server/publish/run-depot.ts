import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { HTTPError } from 'h3';
import { z } from 'zod';
import { refusalError, type Refusal } from './refusal.ts';
import { jsonOrUndefined } from '../data-files.ts';
import type { Logs } from './after-swap.ts';

/**
 * The operator CLI, run by the publishing API (issue 30): one implementation of release, withdraw,
 * restore and edit, whichever way it is asked for. A child process rather than an import: the origin
 * does not load the build (DESIGN: server/ never imports build/), a build's CPU never stalls the
 * origin's answers, and a publish queues on the build lock like any release.
 */
const DEPOT_CLI = fileURLToPath(new URL('../../build/cli/launch.mjs', import.meta.url));

/** What the CLI says on stderr once a change's record is in data/ (build/cli/release.ts WRITTEN_LINE). */
const WRITTEN = /^\[depot\] record written: (plugin-\d+-[A-Za-z0-9]+)(?: (\S+))?$/;

/** A refusal as the CLI prints it under DEPOT_REFUSALS=json (build/cli/depot.ts). */
const PrintedRefusal = z.object({
  refused: z.string(),
  refusal: z.object({ kind: z.string(), field: z.string().optional(), existingId: z.string().optional() }).optional(),
});

export type Written = { id: string; updatedAt: string | undefined };

export type DepotRun = {
  /**
   * The record is in data/ (its delta tree follows at once); null when the command finished without
   * writing one (an edit that changes nothing); rejected with the refusal as an HTTP error.
   */
  written: Promise<Written | null>;
  /** The whole command, its build included: the JSON it printed. */
  finished: Promise<unknown>;
};

/** How long a command may take in all: a build at 10,000 versions with the site takes about a minute. */
const COMMAND_TIMEOUT_MS = 15 * 60_000;

/** Runs `depot <args>` with this process's environment and folder, as the operator would: its progress logged at info, its failure at warn. */
export function runDepot(args: string[], logs: Logs): DepotRun {
  const child = spawn(process.execPath, [DEPOT_CLI, ...args], {
    env: { ...process.env, DEPOT_REFUSALS: 'json' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
  let stdout = '';
  const stderr: string[] = [];
  let wrote: (written: Written | null) => void;
  const written = new Promise<Written | null>((resolve) => (wrote = resolve));
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      stderr.push(line);
      const match = WRITTEN.exec(line);
      if (match) wrote({ id: match[1]!, updatedAt: match[2] });
      else if (!line.startsWith('{')) logs.info(line);
    }
  });
  const finished = new Promise<unknown>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) return resolve(jsonOrUndefined(stdout));
      reject(commandError(stderr, code));
    });
  });
  // Whoever awaits, a failure after the answer is only logged: never an unhandled rejection.
  finished.then(
    () => wrote(null),
    (error: Error) => logs.warn(`[publish] depot ${args[0]}: ${error.message}`),
  );
  // Refused or failed before its record was written: the same error.
  return { written: Promise.race([written, finished.then(() => written)]), finished };
}

/** The CLI's refusal as the API answers it (400, 404, 409, 422), else a 500 that says the command failed. */
function commandError(stderr: string[], code: number | null): HTTPError {
  for (const line of stderr) {
    if (!line.startsWith('{')) continue;
    const printed = PrintedRefusal.safeParse(jsonOrUndefined(line));
    if (!printed.success) continue;
    const { refused, refusal } = printed.data;
    return refusalError(refused, (refusal as Refusal | undefined) ?? { kind: 'field', field: 'metadata' });
  }
  return new HTTPError({
    status: 500,
    message: `the release command failed (exit ${code ?? 'killed'}); the origin's log says why`,
  });
}
