// Issue 30 item 5: a version's files change together, the record the commit point. What a kill
// leaves at each step of commitVersionChange is finished or undone by recoverInterruptedChanges;
// each state below is the files a killed writer leaves, made with the real writer's steps.
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { commitVersionChange, recoverInterruptedChanges } from '../build/version-commit.ts';

const ID = 'plugin-1790000000000-abc123';
const ctx = {} as { dataDir: string };
const files = async () => {
  const list = async (dir: string) => (await readdir(join(ctx.dataDir, dir))).map((name) => `${dir}/${name}`);
  const names = [...(await list('versions')), ...(await list('jars'))].sort();
  return Object.fromEntries(
    await Promise.all(names.map(async (n) => [n, await readFile(join(ctx.dataDir, n), 'utf8')])),
  );
};
const write = (path: string, text: string) => writeFile(join(ctx.dataDir, path), text);

const commit = suite('a version change, interrupted at each step and recovered');
commit.before.each(async () => {
  ctx.dataDir = await mkdtemp(join(tmpdir(), 'depot-commit-'));
  await mkdir(join(ctx.dataDir, 'versions'));
  await mkdir(join(ctx.dataDir, 'jars'));
});
commit.after.each(() => rm(ctx.dataDir, { recursive: true, force: true }));

commit('a whole release leaves its three files and nothing else', async () => {
  await commitVersionChange(ctx.dataDir, { id: ID, recordText: 'record', jar: Buffer.from('jar'), changelog: 'notes' });
  assert.equal(await files(), {
    [`jars/${ID}.jar`]: 'jar',
    [`versions/${ID}.json`]: 'record',
    [`versions/${ID}.md`]: 'notes',
  });
  assert.equal(await recoverInterruptedChanges(ctx.dataDir), { finished: [], undone: [] });
});

commit('a release killed before its record: undone, data/ as it was', async () => {
  // Intent, JAR and waiting changelog written; the record not.
  await write(`versions/${ID}.pending`, 'record');
  await write(`jars/${ID}.jar`, 'jar');
  await write(`versions/${ID}.md.next`, 'notes');
  assert.equal(await recoverInterruptedChanges(ctx.dataDir), { finished: [], undone: [ID] });
  assert.equal(await files(), {});
});

commit('a release killed after its record: finished, the changelog in place', async () => {
  await write(`versions/${ID}.pending`, 'record');
  await write(`jars/${ID}.jar`, 'jar');
  await write(`versions/${ID}.md.next`, 'notes');
  await write(`versions/${ID}.json`, 'record');
  assert.equal(await recoverInterruptedChanges(ctx.dataDir), { finished: [ID], undone: [] });
  assert.equal(await files(), {
    [`jars/${ID}.jar`]: 'jar',
    [`versions/${ID}.json`]: 'record',
    [`versions/${ID}.md`]: 'notes',
  });
});

commit('an edit killed before its record: the old record and the old changelog kept', async () => {
  await commitVersionChange(ctx.dataDir, {
    id: ID,
    recordText: 'old record',
    jar: Buffer.from('jar'),
    changelog: 'old',
  });
  const before = await files();
  await write(`versions/${ID}.pending`, 'new record');
  await write(`versions/${ID}.md.next`, 'new');
  assert.equal(await recoverInterruptedChanges(ctx.dataDir), { finished: [], undone: [ID] });
  assert.equal(await files(), before, 'the JAR of a version whose record stands is never removed');
});

commit('an edit killed after its record: the new changelog moved into place', async () => {
  await commitVersionChange(ctx.dataDir, {
    id: ID,
    recordText: 'old record',
    jar: Buffer.from('jar'),
    changelog: 'old',
  });
  await write(`versions/${ID}.pending`, 'new record');
  await write(`versions/${ID}.md.next`, 'new');
  await write(`versions/${ID}.json`, 'new record');
  assert.equal(await recoverInterruptedChanges(ctx.dataDir), { finished: [ID], undone: [] });
  assert.equal(await files(), {
    [`jars/${ID}.jar`]: 'jar',
    [`versions/${ID}.json`]: 'new record',
    [`versions/${ID}.md`]: 'new',
  });
});

commit('a withdrawal (the record alone) killed after its intent: undone, nothing else touched', async () => {
  await commitVersionChange(ctx.dataDir, { id: ID, recordText: 'old record', jar: Buffer.from('jar') });
  const before = await files();
  await write(`versions/${ID}.pending`, 'withdrawn record');
  assert.equal(await recoverInterruptedChanges(ctx.dataDir), { finished: [], undone: [ID] });
  assert.equal(await files(), before);
});

commit.run();
