import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { unzipSync } from 'fflate';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makePluginJar } from '../build/plugin-jar.ts';
import { checkZipDirectory, inspectJar } from '../server/versions/jar.ts';
import { ROOT, makeWorkspace, snapshotFiles, workspaceEnv, type CliResult, type Workspace } from './helpers.ts';

// Issue 27, item 9: a zip whose end record lies about its directory was accepted (fflate reads past it).

const jar = () =>
  makePluginJar({
    files: { 'plugin.yml': 'name: Liar\nversion: 1.0.0\nmain: a.Liar\n', 'a/Liar.class': 'x'.repeat(300) },
    filler: 1000,
  });

/** The end of central directory record's offset in a zip without a comment. */
const endOf = (bytes: Uint8Array) => bytes.length - 22;
const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** A copy of `bytes` with the little-endian integer of `width` bytes at `at` changed by `change`. */
function patched(bytes: Uint8Array, at: number, width: 2 | 4, change: (value: number) => number): Uint8Array {
  const copy = bytes.slice();
  if (width === 2) view(copy).setUint16(at, change(view(copy).getUint16(at, true)), true);
  else view(copy).setUint32(at, change(view(copy).getUint32(at, true)) >>> 0, true);
  return copy;
}

const directory = suite('checkZipDirectory');

directory('makePluginJar output and fflate zips pass, and list as before', () => {
  const bytes = jar();
  checkZipDirectory(bytes);
  assert.equal(inspectJar(bytes).entries, Object.keys(unzipSync(bytes)));
});

const lies: [string, (bytes: Uint8Array) => Uint8Array, RegExp][] = [
  [
    'counts one entry more in all than on this disk',
    (b) => patched(b, endOf(b) + 10, 2, (n) => n + 1),
    /entry counts disagree \(4 and 5\)/,
  ],
  [
    'counts one more on this disk too',
    (b) =>
      patched(
        patched(b, endOf(b) + 8, 2, (n) => n + 1),
        endOf(b) + 10,
        2,
        (n) => n + 1,
      ),
    /counts 5 entries/,
  ],
  [
    'counts one entry fewer (hiding one)',
    (b) =>
      patched(
        patched(b, endOf(b) + 8, 2, (n) => n - 1),
        endOf(b) + 10,
        2,
        (n) => n - 1,
      ),
    /counts 3 entries, but the central directory holds more/,
  ],
  [
    'says the directory is larger',
    (b) => patched(b, endOf(b) + 12, 4, (n) => n + 46),
    /runs past the end record|holds more/,
  ],
  [
    'says the directory starts later',
    (b) => patched(b, endOf(b) + 16, 4, (n) => n + 1),
    /runs past the end record|holds 0/,
  ],
  [
    'says the directory starts earlier',
    (b) => patched(b, endOf(b) + 16, 4, (n) => n - 46),
    /holds 0|runs into|points to no/,
  ],
  [
    'a directory entry with a broken signature',
    (b) => {
      const offset = view(b).getUint32(endOf(b) + 16, true);
      return patched(b, offset, 4, (n) => n ^ 1);
    },
    /holds 0/,
  ],
  [
    'a directory entry pointing past its data',
    (b) => {
      const offset = view(b).getUint32(endOf(b) + 16, true);
      return patched(b, offset + 42, 4, (n) => n + 7);
    },
    /entry 1 points to no local header/,
  ],
  [
    'an entry whose compressed size runs into the directory',
    (b) => {
      const offset = view(b).getUint32(endOf(b) + 16, true);
      return patched(b, offset + 20, 4, (n) => n + 100_000);
    },
    /entry 1's data runs into the central directory/,
  ],
  ['no end record', (b) => b.slice(0, -22), /no end of central directory record/],
];
for (const [name, lie, message] of lies)
  directory(`refuses a zip whose ${name}`, () => {
    const bytes = lie(jar());
    assert.throws(() => checkZipDirectory(bytes), message);
    assert.throws(() => inspectJar(bytes), /^not a zip\/JAR archive \(/);
  });

directory('any other entry count in the end record is refused', () => {
  const bytes = jar();
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 0xfffe }).filter((n) => n !== 4),
      (count) => {
        const lying = patched(
          patched(bytes, endOf(bytes) + 8, 2, () => count),
          endOf(bytes) + 10,
          2,
          () => count,
        );
        assert.throws(() => checkZipDirectory(lying));
      },
    ),
    { numRuns: 300 },
  );
});

directory('a byte changed anywhere in the directory or end record: refused, or listed as fflate lists it', () => {
  const bytes = jar();
  const offset = view(bytes).getUint32(endOf(bytes) + 16, true);
  fc.assert(
    fc.property(fc.integer({ min: offset, max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, flip) => {
      const changed = bytes.slice();
      changed[at]! ^= flip;
      let entries: string[];
      try {
        entries = inspectJar(changed).entries;
      } catch {
        return; // refused
      }
      // Accepted: the listing is a complete one, of as many entries as the directory holds.
      assert.is(entries.length, 4);
    }),
    { numRuns: 500 },
  );
});

directory.run();

const cli = suite('npm run depot -- release with a lying zip');
const ctx = {} as { workspace: Workspace };
cli.before(async () => {
  ctx.workspace = await makeWorkspace({ build: false });
});
cli.after(() => ctx.workspace?.remove());

/** `npm run --silent depot -- <args>`, as an operator types it. */
function npmDepot(args: string[]): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      'npm',
      ['run', '--silent', 'depot', '--', ...args],
      { cwd: ROOT, env: workspaceEnv(ctx.workspace), timeout: 120_000 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

cli('refused with the reason, before anything is written to data/', async () => {
  const bytes = jar();
  const lying = patched(
    patched(bytes, endOf(bytes) + 8, 2, (n) => n + 3),
    endOf(bytes) + 10,
    2,
    (n) => n + 3,
  );
  const file = join(ctx.workspace.dir, 'Liar-1.0.0.jar');
  await writeFile(file, lying);
  const before = await snapshotFiles(ctx.workspace.dataDir);
  const result = await npmDepot(['release', file, '--version', '7.0.0', '--java', '21', '--software', 'PaperMC']);
  assert.is(result.code, 1, result.stderr);
  assert.is(result.stdout, '');
  assert.match(
    result.stderr,
    /depot release: .*Liar-1\.0\.0\.jar is not a zip\/JAR archive \(the end record counts 7 entries, the central directory holds 4\)/,
  );
  assert.equal(await snapshotFiles(ctx.workspace.dataDir), before, 'data/ untouched');
});

cli.run();
