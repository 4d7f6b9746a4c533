import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FormData, fetch } from 'undici';
import type { Manifest } from '../server/tree/format.ts';
import { makeWorkspace, pluginJar, runDepot, snapshotFiles, spawnOrigin, until, type Workspace } from './helpers.ts';

// Issue 30's preamble: the CLI and the API are one implementation, and both produce the same data/
// and the same served tree. Two copies of the demo data/ and dist/: the same JAR with the same
// options released by `depot release --by alice` in one, by POST /api/plugin-versions with alice's
// token in the other; both full builds finished, data/ and dist/current are compared file by file.
//
// What legitimately differs, normalised explicitly: the new version's id (`plugin-<ms>-<sha>`: the
// release's clock) and its createdAt/updatedAt, wherever they are written; the manifest (its ETags
// hash bodies that hold those) and the build's own record (build times). Nothing else.

const VERSION = '30.0.0';
const FILE_NAME = `Parity-${VERSION}.jar`;
const CHANGELOG = 'Both ways *the same*.';

type Record = { id: string; createdAt: string; updatedAt: string; [field: string]: unknown };

const newRecord = async (workspace: Workspace, before: string[]) => {
  const name = Object.keys(await snapshotFiles(workspace.dataDir)).find(
    (path) => /^versions\/plugin-.*\.json$/.test(path) && !before.includes(path),
  );
  assert.ok(name, 'a new record');
  return JSON.parse(await readFile(join(workspace.dataDir, name), 'utf8')) as Record;
};

/** Every file the served tree answers with (its identity bodies), text with the version's id and times replaced. */
async function servedTree(workspace: Workspace, record: Record) {
  const tree = join(workspace.distDir, 'current');
  const manifest = JSON.parse(await readFile(join(tree, 'manifest.json'), 'utf8')) as Manifest;
  const normalise = (text: string) =>
    text
      .replaceAll(record.id, '<id>')
      .replaceAll(record.createdAt, '<createdAt>')
      .replaceAll(record.updatedAt, '<updatedAt>')
      .replaceAll(String(Date.parse(record.createdAt)), '<createdAtMs>');
  const files: { [path: string]: string } = {};
  for (const [route, entry] of Object.entries(manifest.routes)) {
    const bytes = await readFile(join(tree, entry.file));
    files[normalise(route)] = normalise(bytes.toString('latin1'));
  }
  return files;
}

test('depot release and POST /api/plugin-versions write the same data/ and serve the same tree', async () => {
  const [cli, api] = [await makeWorkspace(), await makeWorkspace()];
  const origin = { current: null as Awaited<ReturnType<typeof spawnOrigin>> | null };
  try {
    const jar = pluginJar(VERSION);
    const before = Object.keys(await snapshotFiles(cli.dataDir));

    const jarFile = join(cli.dir, FILE_NAME);
    const notes = join(cli.dir, 'notes.md');
    await Promise.all([writeFile(jarFile, jar), writeFile(notes, CHANGELOG)]);
    const options = ['--version', VERSION, '--java', '21', '--software', 'PaperMC', '--channel', 'beta'];
    const released = await runDepot(['release', jarFile, ...options, '--changelog', notes, '--by', 'alice'], cli);
    assert.is(released.code, 0, released.stderr);

    const added = await runDepot(['token', 'add', 'alice'], api);
    assert.is(added.code, 0, added.stderr);
    const { token } = JSON.parse(added.stdout) as { token: string };
    origin.current = await spawnOrigin(api);
    const body = new FormData();
    body.set('file', new Blob([Buffer.from(jar)]), FILE_NAME);
    const metadata = { pluginVersion: VERSION, javaVersion: '21', serverSoftware: ['PaperMC'], channel: 'beta' };
    body.set('metadata', JSON.stringify({ ...metadata, changelog: CHANGELOG }));
    const answer = await fetch(`${origin.current.url}/api/plugin-versions`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.is(answer.status, 201, await answer.text());
    // The full build goes on after the answer; it is done once its lock is gone.
    await until(() => !existsSync(join(api.distDir, '.build.lock')), 'the publish’s full build', 180_000);

    const [a, b] = [await newRecord(cli, before), await newRecord(api, before)];
    // Records: equal but for the id and the times (the release's clock), and createdBy is alice in both.
    const strip = ({ id: _id, createdAt: _c, updatedAt: _u, ...rest }: Record) => rest;
    assert.equal(strip(a), strip(b));
    assert.is(a.createdBy, 'alice');
    // data/ file by file, the new version's files named by one id.
    // The record's own file holds the id and times: compared field by field above, left out here.
    const rename = (snapshot: { [path: string]: string }, id: string) =>
      Object.fromEntries(
        Object.entries(snapshot)
          .filter(([path]) => path !== `versions/${id}.json`)
          .map(([path, digest]) => [path.replace(id, '<id>'), digest]),
      );
    assert.equal(rename(await snapshotFiles(cli.dataDir), a.id), rename(await snapshotFiles(api.dataDir), b.id));
    // The served trees: the same routes, the same bytes once the id and times are named alike.
    const [treeA, treeB] = [await servedTree(cli, a), await servedTree(api, b)];
    assert.equal(Object.keys(treeA).sort(), Object.keys(treeB).sort());
    const differing = Object.keys(treeA).filter((route) => treeA[route] !== treeB[route]);
    assert.equal(differing, []);
  } finally {
    if (origin.current) {
      origin.current.child.kill('SIGTERM');
      await origin.current.exited;
    }
    await Promise.all([cli.remove(), api.remove()]);
  }
});

test.run();
