import { execFile } from 'node:child_process';
import { ROOT } from '../test/processes.ts';

/** The operator CLI as `npm run depot` runs it (its bundle, build/cli/launch.mjs), without npm's own start. */
export const DEPOT = ['build/cli/launch.mjs'];

/** Runs a command to its end (refused on failure, unless EXPECT_FAILURE is set): its wall time, ms. */
export function timeCommand(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 120_000,
): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) =>
    execFile(
      command,
      args,
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: timeoutMs },
      (error, out, stderr) => {
        if (error && !env.EXPECT_FAILURE)
          reject(new Error(`${command} ${args.join(' ')}: ${stderr || out || error.message}`));
        else resolve(performance.now() - started);
      },
    ),
  );
}

/** Does the origin answer `version` as the latest, and its download with the released bytes? */
export async function answersRelease(base: string, path: string, version: string, bytes: Uint8Array): Promise<boolean> {
  const response = await fetch(base + path);
  if (response.status === 404) return false;
  const body = (await response.json()) as { version: { pluginVersion: string; downloadUrl: string } };
  if (body.version.pluginVersion !== version) return false;
  const download = await fetch(base + body.version.downloadUrl);
  const served = new Uint8Array(await download.arrayBuffer());
  return download.status === 200 && Buffer.compare(served, bytes) === 0;
}
