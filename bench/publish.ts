import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from '../test/processes.ts';

// Issue 30: "publish over HTTP -> served", beside `depot release -> served` of the same run.

/** A publishing token for alice from `depot token add`, in the store the origin reads (`env`'s STORAGE_DIR). */
export function addPublishToken(env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['build/cli/launch.mjs', 'token', 'add', 'alice', '--name', 'bench'],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`depot token add: ${stderr || error.message}`));
        else resolve((JSON.parse(stdout) as { token: string }).token);
      },
    ),
  );
}

type Publish = { base: string; token: string; version: string; bytes: Uint8Array; distDir: string };

/**
 * From the start of `POST /api/plugin-versions` (a small JAR for Folia, so the CLI's PaperMC
 * releases stay the latest) until its 201, which the origin sends once it serves the version; the
 * download is then checked (untimed), and the publish's full build awaited, so that the next
 * timed command does not queue behind it on the build lock.
 */
export async function publishToServed({ base, token, version, bytes, distDir }: Publish): Promise<number> {
  const body = new FormData();
  body.set('file', new Blob([Buffer.from(bytes)]), `Publish-${version}.jar`);
  body.set('metadata', JSON.stringify({ pluginVersion: version, javaVersion: 21, serverSoftware: ['Folia'] }));
  const started = performance.now();
  const response = await fetch(`${base}/api/plugin-versions`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${token}` },
  });
  const answer = (await response.json()) as { version?: { id: string }; error?: string };
  const ms = performance.now() - started;
  if (response.status !== 201 || !answer.version)
    throw new Error(`publish ${version}: ${response.status} ${answer.error}`);
  const download = await fetch(`${base}/api/plugin-versions/download/${answer.version.id}`);
  const served = new Uint8Array(await download.arrayBuffer());
  if (download.status !== 200 || Buffer.compare(served, bytes) !== 0)
    throw new Error(`publish ${version}: answered 201, but its download is not the JAR sent`);
  const deadline = Date.now() + 120_000;
  while (existsSync(join(distDir, '.build.lock'))) {
    if (Date.now() > deadline) throw new Error(`publish ${version}: its build still runs after 120 s`);
    await sleep(20);
  }
  return ms;
}
