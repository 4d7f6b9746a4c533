// Issue 30 item 5: PUBLISH, PUBLISH_MAX_BYTES, NGINX_PUBLISH_ORIGIN and AFTER_SWAP, read and refused
// as every other setting is, and the publish origin part of what a tree is built from.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runBuild } from '../build/build.ts';
import { readConfig } from '../server/config.ts';
import { SHARED_BUILD_CACHE, makeWorkspace, runBuildCommand, type Workspace } from './helpers.ts';

const MiB = 2 ** 20;

const settings = suite('publishing settings');
settings('the defaults: publishing on, 64 MiB, the first origin publishes, no AFTER_SWAP', () => {
  const config = readConfig({ NGINX_ORIGINS: '10.0.0.5:3000,10.0.0.6:3000' });
  assert.equal(config.publish, { enabled: true, maxBytes: 64 * MiB, afterSwap: undefined });
  assert.is(config.deploy.publishOrigin, '10.0.0.5:3000');
  assert.is(config.deploy.publishMaxBytes, 64 * MiB);
});
settings('values as an operator writes them', () => {
  const cases: [Record<string, string>, (config: ReturnType<typeof readConfig>) => unknown, unknown][] = [
    [{ PUBLISH: 'off' }, (c) => c.publish.enabled, false],
    [{ PUBLISH: 'on' }, (c) => c.publish.enabled, true],
    [{ PUBLISH_MAX_BYTES: '100MB' }, (c) => c.publish.maxBytes, 100_000_000],
    [{ PUBLISH_MAX_BYTES: '1GiB' }, (c) => c.deploy.publishMaxBytes, 2 ** 30],
    [{ PUBLISH_MAX_BYTES: '5000' }, (c) => c.publish.maxBytes, 5000],
    [{ NGINX_PUBLISH_ORIGIN: ' 10.0.0.9:3000 ' }, (c) => c.deploy.publishOrigin, '10.0.0.9:3000'],
    [{ NGINX_PUBLISH_ORIGIN: '[::1]:3001' }, (c) => c.deploy.publishOrigin, '[::1]:3001'],
    [{ NGINX_PUBLISH_ORIGIN: '' }, (c) => c.deploy.publishOrigin, '127.0.0.1:3000'],
    [{ AFTER_SWAP: 'rsync -a "$DEPOT_TREE" web:/srv' }, (c) => c.publish.afterSwap, 'rsync -a "$DEPOT_TREE" web:/srv'],
    [{ AFTER_SWAP: '   ' }, (c) => c.publish.afterSwap, undefined],
  ];
  for (const [env, read, expected] of cases) assert.equal(read(readConfig(env)), expected, JSON.stringify(env));
});
settings('bad values are refused naming the variable and what it allows', () => {
  const refusals: [Record<string, string>, RegExp][] = [
    [{ PUBLISH: 'yes' }, /PUBLISH: must be on or off/],
    [{ PUBLISH_MAX_BYTES: 'lots' }, /PUBLISH_MAX_BYTES: must be a size in bytes of at least 1, such as 67108864/],
    [{ PUBLISH_MAX_BYTES: '0' }, /PUBLISH_MAX_BYTES: must be a size in bytes of at least 1/],
    [{ PUBLISH_MAX_BYTES: '-5MB' }, /PUBLISH_MAX_BYTES: must be a size in bytes/],
    [{ NGINX_PUBLISH_ORIGIN: '10.0.0.5' }, /NGINX_PUBLISH_ORIGIN: must be one host:port/],
    [{ NGINX_PUBLISH_ORIGIN: '10.0.0.5:3000,10.0.0.6:3000' }, /NGINX_PUBLISH_ORIGIN: must be one host:port/],
  ];
  for (const [env, message] of refusals) assert.throws(() => readConfig(env), message, JSON.stringify(env));
});
settings.run();

const operator = suite('publishing settings: npm run build');
const ctx = {} as { workspace: Workspace };
operator.before(async () => {
  ctx.workspace = await makeWorkspace({ build: false });
});
operator.after(() => ctx.workspace.remove());
operator('a bad PUBLISH_MAX_BYTES stops the build with its name, nothing written', async () => {
  const result = await runBuildCommand(ctx.workspace, { PUBLISH_MAX_BYTES: '64 megs' });
  assert.is.not(result.code, 0);
  assert.match(result.stderr, /^Error: Invalid configuration: PUBLISH_MAX_BYTES: must be a size in bytes/m);
  assert.not.ok(existsSync(ctx.workspace.distDir), 'no dist/');
});
operator('a changed NGINX_PUBLISH_ORIGIN or PUBLISH_MAX_BYTES is a new tree, whose nginx.conf names it', async () => {
  const build = (env: Record<string, string>) =>
    runBuild({
      dataDir: ctx.workspace.dataDir,
      distDir: ctx.workspace.distDir,
      cacheDir: SHARED_BUILD_CACHE,
      site: false,
      ifChanged: true,
      deploy: readConfig(env).deploy,
    });
  const first = await build({});
  assert.is((await build({})).skipped, true, 'the same settings: the same tree');
  const moved = await build({ NGINX_PUBLISH_ORIGIN: '10.0.0.9:3000' });
  assert.is(moved.skipped, false);
  assert.is.not(moved.treeDir, first.treeDir);
  assert.match(
    await readFile(join(moved.treeDir, 'nginx.conf'), 'utf8'),
    /upstream depot_publish \{\n {2}server 10\.0\.0\.9:3000;/,
  );
  const larger = await build({ NGINX_PUBLISH_ORIGIN: '10.0.0.9:3000', PUBLISH_MAX_BYTES: '128MiB' });
  assert.is(larger.skipped, false);
  assert.match(
    await readFile(join(larger.treeDir, 'nginx.conf'), 'utf8'),
    new RegExp(`client_max_body_size ${129 * MiB};`),
  );
});
operator.run();
