// `nginx -t` on a generated config, included in http { } as docs/deployment.md shows: nginx itself
// judges what the build wrote (the deploy-configs and fuzz tests).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { findProgram } from './processes.ts';

const NGINX = findProgram('nginx');

/**
 * Fails the test when nginx refuses `text`; says so and checks nothing where nginx is not installed.
 * `included`: the files it includes (nginxFiles), written beside it in place of the tree's own.
 */
export async function assertNginxAccepts(text: string, included: Record<string, string> = {}): Promise<void> {
  if (!NGINX) return console.warn('nginx not installed: the syntax check is not run');
  const dir = await mkdtemp(join(tmpdir(), 'depot-nginx-t-'));
  try {
    let conf = text;
    for (const [name, body] of Object.entries(included)) {
      await writeFile(join(dir, name), body);
      conf = conf.replace(new RegExp(`(include )\\S+/${name.replaceAll('.', '\\.')};`), `$1${join(dir, name)};`);
    }
    await writeFile(join(dir, 'depot.conf'), conf);
    await writeFile(
      join(dir, 'nginx.conf'),
      `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n  include ${dir}/depot.conf;\n}\n`,
    );
    const result = await new Promise<{ code: number; out: string }>((done) =>
      execFile(NGINX, ['-t', '-p', dir, '-c', join(dir, 'nginx.conf')], (error, stdout, stderr) =>
        done({ code: error ? 1 : 0, out: stdout + stderr }),
      ),
    );
    assert.is(result.code, 0, result.out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
