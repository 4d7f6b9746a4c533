import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runBuild } from '../build/build.ts';
import { startOrigin, type RunningOrigin } from '../server/origin.ts';

export const ROOT = resolve(import.meta.dirname, '..');

export type Workspace = { dir: string; dataDir: string; distDir: string; remove: () => Promise<void> };

/** A temp copy of the demo data/ with its own dist/, built. */
export async function makeWorkspace(options: { build?: boolean } = {}): Promise<Workspace> {
  const dir = await mkdtemp(join(tmpdir(), 'depot-test-'));
  const dataDir = join(dir, 'data');
  const distDir = join(dir, 'dist');
  await cp(join(ROOT, 'data'), dataDir, { recursive: true });
  if (options.build !== false) await runBuild({ dataDir, distDir });
  return { dir, dataDir, distDir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export async function startTestOrigin(workspace: Workspace): Promise<RunningOrigin> {
  return startOrigin({ distDir: workspace.distDir, host: '127.0.0.1', port: 0 });
}

export type CliResult = { code: number; stdout: string; stderr: string };

/** Runs the operator CLI as an operator would, in a child process. */
export function runDepot(args: string[], workspace: Workspace): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'build/cli/depot.ts'), ...args],
      { cwd: ROOT, env: { ...process.env, DATA_DIR: workspace.dataDir, DIST_DIR: workspace.distDir }, timeout: 60_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}
