import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { JOURNAL_FOLDER, openJournaledSampleStore } from '../server/charts/samples/journaled.ts';
import { SEGMENT_SUFFIX } from '../server/charts/samples/journal-segment.ts';
import { DAY, HOUR } from '../server/helpers/duration.ts';
import { createFileStorage } from '../server/storage.ts';
import { collectLog } from './collect-log.ts';

// Issue 32 item 4: the embedded store's journal, over real files. A segment left by a killed
// origin is written here by hand, as it lies on disk after the kill.

const A = '7f000000-0000-4000-8000-00000000000a';
const B = '7f000000-0000-4000-8000-00000000000b';
const TODAY = Math.floor(Date.now() / DAY);
const HOUR_AT = TODAY * DAY + 10 * HOUR;
const SEGMENT = 'mabc0000-0123abcd';

const ctx = {} as { dir: string };
const journal = suite('the samples journal');
journal.before.each(async () => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'depot-journal-'));
  await mkdir(join(ctx.dir, JOURNAL_FOLDER), { recursive: true });
});
journal.after.each(() => rm(ctx.dir, { recursive: true, force: true }));

const line = (server: string, ...samples: [number, number][]) => `${JSON.stringify({ server, samples })}\n`;
const leaveSegment = (text: string) => writeFile(join(ctx.dir, JOURNAL_FOLDER, `${SEGMENT}${SEGMENT_SUFFIX}`), text);
const segmentsLeft = async () =>
  (await readdir(join(ctx.dir, JOURNAL_FOLDER))).filter((name) => name.endsWith(SEGMENT_SUFFIX));
const dayFile = (server: string) => join(ctx.dir, 'samples', server, String(TODAY));

async function open(warnings: string[] = []) {
  const store = await openJournaledSampleStore(createFileStorage(ctx.dir), collectLog(warnings));
  assert.ok(store, 'files: the journal is used');
  return store;
}

journal('a torn last line (a kill mid-append) is skipped and said once; the lines before it are folded', async () => {
  await leaveSegment(line(A, [HOUR_AT, 5]) + line(B, [HOUR_AT, 6], [HOUR_AT + 60_000, 8]) + '{"server":"7f00');
  const warnings: string[] = [];
  const store = await open(warnings);
  try {
    assert.equal(await store.range(A, HOUR_AT, HOUR_AT), [{ hour: HOUR_AT, max: 5, sum: 5, count: 1 }]);
    assert.equal(await store.range(B, HOUR_AT, HOUR_AT), [{ hour: HOUR_AT, max: 8, sum: 14, count: 2 }]);
    assert.is(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0]!, 'cut short');
    assert.equal(await segmentsLeft(), [], 'folded at start, then removed');
  } finally {
    await store.close();
  }
});

journal('lines that are not samples are skipped and said once; the others are folded', async () => {
  await leaveSegment(line(A, [HOUR_AT, 5]) + 'garbage\n' + line('not-a-uuid', [HOUR_AT, 1]) + line(A, [HOUR_AT, -3]));
  const warnings: string[] = [];
  const store = await open(warnings);
  try {
    assert.equal(await store.range(A, HOUR_AT, HOUR_AT), [{ hour: HOUR_AT, max: 5, sum: 5, count: 1 }]);
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0]!, '3 line(s)');
  } finally {
    await store.close();
  }
});

journal('a replay never counts twice a day that already folded the segment (killed before removing it)', async () => {
  await leaveSegment(line(A, [HOUR_AT, 5]) + line(B, [HOUR_AT, 6]));
  // A's day was written from the segment before the kill; B's was not.
  await mkdir(join(ctx.dir, 'samples', A), { recursive: true });
  await writeFile(dayFile(A), JSON.stringify({ '10': [5, 5, 1], folded: [SEGMENT] }));
  const store = await open();
  try {
    assert.equal(await store.range(A, HOUR_AT, HOUR_AT), [{ hour: HOUR_AT, max: 5, sum: 5, count: 1 }]);
    assert.equal(await store.range(B, HOUR_AT, HOUR_AT), [{ hour: HOUR_AT, max: 6, sum: 6, count: 1 }]);
  } finally {
    await store.close();
  }
  assert.equal(JSON.parse(await readFile(dayFile(A), 'utf8'))['10'], [5, 5, 1]);
  assert.equal(JSON.parse(await readFile(dayFile(B), 'utf8'))['10'], [6, 6, 1]);
});

journal(
  'a range right after add holds the sample before it is folded; close folds it and removes the segments',
  async () => {
    const store = await open();
    const servers = Array.from({ length: 50 }, (_, i) => `7f000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    await Promise.all(servers.map((server, i) => store.add(server, [{ at: HOUR_AT, players: i }])));
    for (const [i, server] of servers.entries())
      assert.equal(await store.range(server, HOUR_AT, HOUR_AT), [{ hour: HOUR_AT, max: i, sum: i, count: 1 }]);
    await store.close();
    assert.equal(await segmentsLeft(), []);
    for (const [i, server] of servers.entries())
      assert.equal(JSON.parse(await readFile(dayFile(server), 'utf8'))['10'], [i, i, 1]);
  },
);

journal('folding a day removes the day that has left the 365-day window', async () => {
  const retired = join(ctx.dir, 'samples', A, String(TODAY - 366));
  await mkdir(join(ctx.dir, 'samples', A), { recursive: true });
  await writeFile(retired, JSON.stringify({ '1': [1, 1, 1] }));
  const store = await open();
  await store.add(A, [{ at: HOUR_AT, players: 2 }]);
  await store.close();
  assert.equal(await readdir(join(ctx.dir, 'samples', A)), [String(TODAY)]);
});

journal.run();
