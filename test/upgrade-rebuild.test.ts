import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Manifest } from '../server/tree/format.ts';
import { OPENAPI_PATH } from '../server/helpers/openapi-path.ts';
import { copyProject, makeWorkspace, workspaceEnv, type CliResult, type Workspace } from './helpers.ts';

// `git pull && npm start`: npm start's build step (`npm run build -- --if-changed`) rebuilds when
// the pulled code renders answers otherwise, and skips when only tests or docs changed. Run as an
// operator types it, in a scratch copy of the project whose code the test edits.

const ctx = {} as { dir: string; workspace: Workspace };

/** `npm run build -- --if-changed` in the copy, with the workspace's data/ and dist/. */
function buildIfChanged(): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      'npm',
      ['run', '--silent', 'build', '--', '--if-changed'],
      { cwd: ctx.dir, env: workspaceEnv(ctx.workspace), timeout: 120_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const UNCHANGED = /^\[build\] unchanged since the current tree: /m;
const SWAPPED = /^\[build\] swap: /m;
const OTHER_CODE = /^\[build\] the current tree was built by other code /m;

async function edit(file: string, change: (text: string) => string) {
  const path = join(ctx.dir, file);
  const before = await readFile(path, 'utf8');
  const after = change(before);
  assert.is.not(after, before, `${file} edited`);
  await writeFile(path, after);
}

const openApiDocument = async () => {
  const current = join(ctx.workspace.distDir, 'current');
  const manifest = Manifest.parse(JSON.parse(await readFile(join(current, 'manifest.json'), 'utf8')));
  return readFile(join(current, manifest.routes[OPENAPI_PATH]!.file), 'utf8');
};

const upgrade = suite('npm run build -- --if-changed across an upgrade of the code');
upgrade.before(async () => {
  ctx.dir = await copyProject('depot-upgrade-');
  ctx.workspace = await makeWorkspace({ build: false });
  const first = await buildIfChanged();
  assert.is(first.code, 0, first.stderr);
  assert.match(first.stdout, SWAPPED);
  assert.not.match(first.stdout, OTHER_CODE, 'no tree before the first build');
});
upgrade.after(async () => {
  await rm(ctx.dir, { recursive: true, force: true });
  await ctx.workspace.remove();
});

upgrade('the same code and data/: skipped', async () => {
  const again = await buildIfChanged();
  assert.is(again.code, 0, again.stderr);
  assert.match(again.stdout, UNCHANGED);
});

upgrade('an upgrade that changes only tests and docs: skipped', async () => {
  await edit('README.md', (text) => `${text}\nA line an upgrade added.\n`);
  await edit('test/tree.test.ts', (text) => `${text}\n// a comment an upgrade added\n`);
  const after = await buildIfChanged();
  assert.is(after.code, 0, after.stderr);
  assert.match(after.stdout, UNCHANGED);
  assert.not.match(after.stdout, SWAPPED);
});

upgrade('an upgrade that changes what an answer says: rebuilt, and the tree answers as the new code does', async () => {
  assert.not.match(await openApiDocument(), /plugin depot \(upgraded\)/);
  await edit('server/openapi.ts', (text) => text.replace("title: 'plugin depot'", "title: 'plugin depot (upgraded)'"));
  const after = await buildIfChanged();
  assert.is(after.code, 0, after.stderr);
  assert.not.match(after.stdout, UNCHANGED);
  assert.match(after.stdout, SWAPPED);
  assert.match(after.stdout, OTHER_CODE);
  assert.match(await openApiDocument(), /"title":"plugin depot \(upgraded\)"/);
  const settled = await buildIfChanged();
  assert.match(settled.stdout, UNCHANGED, 'the upgraded tree is the current one now');
});

upgrade.run();
