// `engines` is true on the Node that runs the suite (.ci/run runs it on the machine's Node 20 and on
// Node 24): no installed package declares a Node it does not run on, as `npm ci`'s EBADENGINE
// warning would say, and what the pinned undici serves still works.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { ROOT } from './processes.ts';

const Lock = z.object({
  packages: z.record(z.string(), z.object({ engines: z.unknown().optional() })),
});

test('the project and every installed package take the Node running the suite', async () => {
  const project = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  assert.ok(semver.satisfies(process.version, project.engines.node), `package.json engines: ${project.engines.node}`);
  const lock = Lock.parse(JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')));
  const refusing = Object.entries(lock.packages).flatMap(([path, entry]) => {
    // npm reads `engines` as an object with a `node` range; older packages wrote an array, which it ignores.
    const node = (entry.engines as { node?: unknown } | undefined)?.node;
    // npm leaves out an optional package whose Node does not match (rollup's lzma binding on 20), quietly.
    const installed = path !== '' && existsSync(join(ROOT, path, 'package.json'));
    return installed &&
      typeof node === 'string' &&
      !semver.satisfies(process.version, node, { includePrerelease: true })
      ? [`${path} needs Node ${node}`]
      : [];
  });
  assert.equal(refusing, [], `on ${process.version}`);
  assert.ok(Object.keys(lock.packages).length > 100, 'the lock lists the installed packages');
});

test("astro's font resolver (unifont) still installs its proxy agent with the undici pinned beside it", async () => {
  // unifont imports undici only to send its font downloads through HTTP(S)_PROXY.
  const script = `
    const { createUnifont } = await import('unifont');
    const { getGlobalDispatcher, EnvHttpProxyAgent } = await import('undici');
    await createUnifont([]);
    console.log(getGlobalDispatcher() instanceof EnvHttpProxyAgent ? 'proxy agent' : 'no proxy agent');`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, HTTPS_PROXY: 'http://127.0.0.1:9' },
  });
  assert.equal(stdout.trim(), 'proxy agent');
});

test.run();
