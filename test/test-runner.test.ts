// `npm test -- <pattern>` as a contributor types it: only the matching files run, no checks, and
// the summary is computed from them, with the slowest files after it.
import { execFile } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from './processes.ts';

function npmTest(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(
      'npm',
      ['test', '--silent', '--', ...args],
      // One worker, whose ports (from 20000) the test files of this run beside it do not use here.
      { cwd: ROOT, env: { ...process.env, TEST_WORKERS: '1' }, timeout: 120_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

test('a pattern runs the matching files alone, and the summary counts their tests', async () => {
  const { code, stdout } = await npmTest(['^software-record\\.test\\.ts$', '^minecraft\\.test\\.ts$']);
  assert.is(code, 0, stdout);
  assert.match(stdout, /^2 test files on 1 workers, no checks$/m);
  assert.match(stdout, /^✔ software-record\.test\.ts: \d+ passed/m);
  assert.match(stdout, /^✔ minecraft\.test\.ts: \d+ passed/m);
  const counts = (label: string) => Number(stdout.match(new RegExp(`^ *${label}: +(\\d+)`, 'm'))?.[1]);
  const perFile = [...stdout.matchAll(/^✔ [\w.-]+: (\d+) passed/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
  assert.ok(perFile > 50, `${perFile} tests`);
  assert.is(counts('Total'), perFile);
  assert.is(counts('Passed'), perFile);
  assert.is(counts('Failed'), 0);
  assert.not.match(stdout, /tsc --noEmit|prettier|knip/);
  const slowest = stdout.slice(stdout.indexOf('The 2 slowest files'));
  assert.match(slowest, /software-record\.test\.ts \(\d+ tests\)/);
  assert.match(slowest, /minecraft\.test\.ts \(\d+ tests\)/);
});

test('a pattern that matches no file is refused, naming it', async () => {
  const { code, stderr } = await npmTest(['^no-such-file$']);
  assert.is(code, 2);
  assert.match(stderr, 'No test file matches /^no-such-file$/');
});

test.run();
