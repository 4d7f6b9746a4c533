import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants, deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { deflateSync, inflateSync, strToU8, zipSync, type Zippable } from 'fflate';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makePluginJar } from '../build/plugin-jar.ts';
import { decideJava, readClassFiles, type ClassFiles } from '../server/versions/class-files.ts';
import { inflateHead } from '../server/versions/inflate-head.ts';
import { JAVA_VERSIONS, classFileOf, listedJavaFor, type JavaVersion } from '../server/versions/java.ts';
import { readDescriptors } from '../server/versions/descriptor.ts';
import { forbiddenCharacter } from '../server/free-text.ts';
import { ROOT } from './helpers.ts';

// Issue 39, item 2: the Java a JAR needs, read from the headers of its class files.

const FIXTURES = join(ROOT, 'test/fixtures/class-files');
const fixture = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)));
const CLASS = { 8: fixture('java8.class'), 11: fixture('java11.class'), 17: fixture('java17.class') } as const;
const MORE = { 21: fixture('java21.class'), 25: fixture('java25.class'), preview: fixture('java25-preview.class') };

/** A class file's first 8 bytes and then some: what the reader sees of one compiled for `major`. */
function classBytes(major: number, minor = 0, size = 64): Uint8Array {
  const bytes = new Uint8Array(Math.max(size, 8));
  const view = new DataView(bytes.buffer);
  view.setUint32(0, 0xcafebabe);
  view.setUint16(4, minor);
  view.setUint16(6, major);
  for (let i = 8; i < bytes.length; i++) bytes[i] = (i * 7) % 13;
  return bytes;
}

const jarOf = (entries: Zippable) =>
  zipSync({ 'META-INF/MANIFEST.MF': strToU8('Manifest-Version: 1.0\r\n\r\n'), ...entries });

const inflate = suite('inflateHead');

inflate(
  'the first bytes of what fflate and zlib deflate, at every level and strategy, as a full inflate gives them',
  () => {
    const data = fc.oneof(
      fc.uint8Array({ maxLength: 3000 }),
      fc
        .array(fc.constantFrom(...strToU8('CAFEBABE class java/lang/Object ')), { maxLength: 3000 })
        .map((bytes) => Uint8Array.from(bytes)),
    );
    const strategies = [constants.Z_DEFAULT_STRATEGY, constants.Z_FIXED, constants.Z_HUFFMAN_ONLY, constants.Z_RLE];
    fc.assert(
      fc.property(
        data,
        fc.integer({ min: 0, max: 9 }),
        fc.constantFrom(...strategies),
        fc.integer({ min: 1, max: 64 }),
        (bytes, level, strategy, want) => {
          for (const deflated of [
            deflateSync(bytes, { level: level as 0 }),
            new Uint8Array(deflateRawSync(bytes, { level, strategy })),
          ]) {
            const head = inflateHead(deflated, 0, deflated.length, want);
            assert.ok(head.ok, JSON.stringify(head));
            assert.equal([...head.bytes], [...inflateSync(deflated).subarray(0, want)]);
          }
        },
      ),
      { numRuns: 400 },
    );
  },
);

inflate('whole streams whose dynamic blocks are followed by stored ones (text, then noise), to the last byte', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 2 ** 31 }), fc.integer({ min: 100, max: 40_000 }), (seed, size) => {
      const bytes = new Uint8Array(size * 2);
      for (let i = 0; i < size; i++) bytes[i] = 97 + ((i * 7 + (i >> 5)) % 11);
      let state = seed;
      for (let i = size; i < bytes.length; i++) {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        bytes[i] = state >>> 24;
      }
      // Sync flushes end blocks on a byte boundary with an empty stored block, as streaming zips do.
      const deflated = new Uint8Array(
        Buffer.concat([
          deflateRawSync(bytes.subarray(0, size), { finishFlush: constants.Z_SYNC_FLUSH }),
          deflateRawSync(bytes.subarray(size)),
        ]),
      );
      const head = inflateHead(deflated, 0, deflated.length, bytes.length);
      assert.ok(head.ok, JSON.stringify(head));
      assert.ok(Buffer.from(head.bytes).equals(Buffer.from(bytes)));
    }),
    { numRuns: 40 },
  );
});

inflate('a stream cut short or of random bytes is refused, never thrown, and reads nothing past its end', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 1, maxLength: 600 }), fc.nat(), (bytes, cut) => {
      const deflated = deflateSync(bytes);
      const end = cut % deflated.length;
      // Past `end`, bytes that would decode to something else if read.
      const padded = new Uint8Array([...deflated.subarray(0, end), ...new Uint8Array(64).fill(0xff)]);
      const head = inflateHead(padded, 0, end, 8);
      if (head.ok) assert.equal([...head.bytes], [...bytes.subarray(0, head.bytes.length)]);
      const random = inflateHead(bytes, 0, bytes.length, 8);
      assert.type(random.ok, 'boolean');
    }),
    { numRuns: 500 },
  );
});

inflate('a bomb of 64 MiB of zeros: 8 bytes out, at once', () => {
  const bomb = deflateSync(new Uint8Array(64 * 1024 * 1024), { level: 9 });
  const started = performance.now();
  const head = inflateHead(bomb, 0, bomb.length, 8);
  assert.ok(head.ok);
  assert.equal([...head.bytes], [0, 0, 0, 0, 0, 0, 0, 0]);
  assert.ok(performance.now() - started < 50, `${performance.now() - started} ms`);
});

inflate.run();

const read = suite('readClassFiles');

const readCases: [string, () => Uint8Array, ClassFiles][] = [
  ['no class at all', () => makePluginJar({ files: { 'plugin.yml': 'name: A\n' } }), { kind: 'none' }],
  [
    'javac --release 8 .. 25: their class files 52 .. 69, the highest named',
    () =>
      jarOf({
        'dev/example/Eight.class': CLASS[8],
        'dev/example/Main.class': MORE[21],
        'dev/example/Seventeen.class': [CLASS[17], { level: 0 }],
        'dev/example/Eleven.class': CLASS[11],
      }),
    { kind: 'classes', count: 4, entry: 'dev/example/Main.class', major: 65 },
  ],
  [
    'Java 25, stored',
    () => jarOf({ 'dev/example/Main.class': [MORE[25], { level: 0 }] }),
    { kind: 'classes', count: 1, entry: 'dev/example/Main.class', major: 69 },
  ],
  [
    'overlays and module-info.class left out, wherever they are',
    () =>
      jarOf({
        'dev/example/Main.class': CLASS[8],
        'META-INF/versions/21/dev/example/Main.class': MORE[21],
        'META-INF/versions/9/module-info.class': MORE[25],
        'module-info.class': MORE[25],
        'dev/example/module-info.class': MORE[25],
      }),
    { kind: 'classes', count: 1, entry: 'dev/example/Main.class', major: 52 },
  ],
  [
    'only overlays and module-info: none',
    () => jarOf({ 'META-INF/versions/17/a/B.class': CLASS[17], 'module-info.class': CLASS[11] }),
    { kind: 'none' },
  ],
  [
    'a preview class (javac --enable-preview --release 25)',
    () => jarOf({ 'dev/example/Main.class': MORE.preview, 'dev/example/Other.class': CLASS[8] }),
    {
      kind: 'classes',
      count: 2,
      entry: 'dev/example/Main.class',
      major: 69,
      preview: { entry: 'dev/example/Main.class', major: 69 },
    },
  ],
  [
    'a .class entry that does not start with 0xCAFEBABE',
    () => jarOf({ 'dev/example/Main.class': CLASS[8], 'a/Liar.class': strToU8('x'.repeat(300)) }),
    { kind: 'unreadable', entry: 'a/Liar.class', problem: 'is not a class file: it does not start with 0xCAFEBABE' },
  ],
  [
    'a .class entry of 5 bytes, deflated',
    () => jarOf({ 'a/Short.class': classBytes(65).subarray(0, 5) }),
    {
      kind: 'unreadable',
      entry: 'a/Short.class',
      problem: "is not a class file: it holds 5 bytes, and a class file's header alone is 8",
    },
  ],
  [
    'a .class entry of 7 bytes, stored',
    () => jarOf({ 'a/Short.class': [classBytes(65).subarray(0, 7), { level: 0 }] }),
    {
      kind: 'unreadable',
      entry: 'a/Short.class',
      problem: "is not a class file: it holds 7 bytes, and a class file's header alone is 8",
    },
  ],
  [
    'a class file version no Java has',
    () => jarOf({ 'a/Old.class': classBytes(44) }),
    {
      kind: 'unreadable',
      entry: 'a/Old.class',
      problem: "is not a class file: its version 44 is older than any Java's",
    },
  ],
  [
    'a zip that is no sound zip',
    () => strToU8('not a zip'),
    { kind: 'unreadable', entry: 'the JAR', problem: 'is not a sound zip (no end of central directory record)' },
  ],
];
for (const [name, jar, expected] of readCases) read(name, () => assert.equal(readClassFiles(jar()), expected));

read('the fixtures are what javac wrote: 52, 55, 61, 65, 69 and a preview 69', () => {
  const headers = [CLASS[8], CLASS[11], CLASS[17], MORE[21], MORE[25], MORE.preview].map((bytes) => {
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    return [view.getUint32(0).toString(16), view.getUint16(4), view.getUint16(6)];
  });
  assert.equal(headers, [
    ['cafebabe', 0, 52],
    ['cafebabe', 0, 55],
    ['cafebabe', 0, 61],
    ['cafebabe', 0, 65],
    ['cafebabe', 0, 69],
    ['cafebabe', 0xffff, 69],
  ]);
});

read('a deflated bomb named .class costs its first 8 bytes', () => {
  const bomb = new Uint8Array(32 * 1024 * 1024);
  bomb.set(classBytes(61, 0, 8));
  const jar = jarOf({ 'a/Bomb.class': [bomb, { level: 9 }] });
  const started = performance.now();
  assert.equal(readClassFiles(jar), { kind: 'classes', count: 1, entry: 'a/Bomb.class', major: 61 });
  assert.ok(performance.now() - started < 100, `${performance.now() - started} ms`);
});

read('20,000 classes javac wrote: each header read in microseconds, the descriptors of the same JAR beside it', () => {
  const compiled = [CLASS[8], CLASS[11], CLASS[17], MORE[21], MORE[25]];
  const entries: Zippable = { 'plugin.yml': strToU8('name: Many\nversion: 1.0.0\nmain: a.Main\n') };
  for (let i = 0; i < 20_000; i++) entries[`a/b${i % 50}/C${i}.class`] = compiled[i % 4]!;
  const jar = jarOf(entries);
  const time = (run: () => unknown) => {
    const runs: number[] = [];
    for (let round = 0; round < 3; round++) {
      const started = performance.now();
      run();
      runs.push(performance.now() - started);
    }
    return Math.min(...runs);
  };
  const classes = time(() => readClassFiles(jar));
  const descriptors = time(() => readDescriptors(jar));
  assert.equal(readClassFiles(jar), { kind: 'classes', count: 20_000, entry: 'a/b3/C3.class', major: 65 });
  // About 5 µs a class here (the bench prints both): a bound for a loaded machine, not a target.
  assert.ok(classes < 1000, `classes ${classes} ms, descriptors ${descriptors} ms`);
});

read.run();

const decide = suite('decideJava');
const context = { jar: 'A.jar', fix: 'compile' } as const;
const classes = (major: number, preview?: { entry: string; major: number }): ClassFiles => ({
  kind: 'classes',
  count: 1,
  entry: 'dev/example/Main.class',
  major,
  ...(preview ? { preview } : {}),
});

const decideCases: [string, ClassFiles, JavaVersion | undefined, ReturnType<typeof decideJava>][] = [
  ['no classes, a claim: the claim', { kind: 'none' }, '17', { ok: true, java: '17' }],
  [
    'no classes, no claim: refused, naming javaVersion',
    { kind: 'none' },
    undefined,
    {
      ok: false,
      wrong: 'javaVersion',
      line: 'A.jar holds no class outside META-INF/versions/ (and module-info.class) to say which Java it needs: pass --java, the oldest Java it runs on (8, 11, 17, 21 or 25)',
    },
  ],
  ['class file 52, no claim: Java 8', classes(52), undefined, { ok: true, java: '8', classFileVersion: 52 }],
  [
    'class file 60 (Java 16), no claim: Java 17',
    classes(60),
    undefined,
    { ok: true, java: '17', classFileVersion: 60 },
  ],
  ['class file 69, no claim: Java 25', classes(69), undefined, { ok: true, java: '25', classFileVersion: 69 }],
  ['class file 61, claim 21: the claim', classes(61), '21', { ok: true, java: '21', classFileVersion: 61 }],
  [
    'class file 65, claim 17: refused as the issue words it',
    classes(65),
    '17',
    {
      ok: false,
      wrong: 'javaVersion',
      line: 'dev/example/Main.class is compiled for Java 21 (class file 65): --java 17 would offer it to Java 17 servers, which cannot load it; pass --java 21, or compile with --release 17',
    },
  ],
  [
    'class file 60, claim 11: pass --java 17',
    classes(60),
    '11',
    {
      ok: false,
      wrong: 'javaVersion',
      line: 'dev/example/Main.class is compiled for Java 16 (class file 60): --java 11 would offer it to Java 11 servers, which cannot load it; pass --java 17, or compile with --release 11',
    },
  ],
  [
    'class file 70: Java 26, which the depot does not list',
    classes(70),
    undefined,
    {
      ok: false,
      wrong: 'jar',
      line: 'dev/example/Main.class is compiled for Java 26 (class file 70), which the depot does not list (8, 11, 17, 21 or 25): no server it serves that Java to exists here; compile with --release 25',
    },
  ],
  [
    'a preview class',
    classes(69, { entry: 'dev/example/Main.class', major: 69 }),
    '25',
    {
      ok: false,
      wrong: 'jar',
      line: 'dev/example/Main.class is compiled with --enable-preview for Java 25 (class file 69, minor 65535): it loads only on a JVM started with --enable-preview, which no server passes; compile without --enable-preview',
    },
  ],
  [
    'an unreadable entry, its name escaped',
    { kind: 'unreadable', entry: 'a/\u0007.class', problem: 'is not a class file: it does not start with 0xCAFEBABE' },
    '21',
    {
      ok: false,
      wrong: 'jar',
      line: '"a/\\u0007.class" is not a class file: it does not start with 0xCAFEBABE; rebuild the JAR',
    },
  ],
];
for (const [name, files, claimed, expected] of decideCases)
  decide(name, () => assert.equal(decideJava(files, claimed, context), expected));

/** Entry names a hostile JAR may carry: format and control characters, CDATA ends, shell words, 60 KB. */
const HOSTILE_NAMES = [
  'dev/\u202eevil/Main.class',
  'a]]>b]]>/Main.class',
  '$HOME/`id`/Main.class',
  'x/\u0000\u001b[31m\r\n/Main.class',
  `${'d/'.repeat(30_000)}Main.class`,
];
decide('a hostile entry name stays one harmless line of bounded length in every refusal', () => {
  const refusals = (name: string) =>
    [jarOf({ [name]: strToU8('not a class') }), jarOf({ [name]: classBytes(65) })].map((bytes) => {
      const decided = decideJava(readClassFiles(bytes), '17', context);
      assert.not.ok(decided.ok, name);
      return decided.ok ? '' : decided.line;
    });
  const check = (name: string) => {
    for (const line of refusals(name)) {
      assert.is(forbiddenCharacter(line), undefined, JSON.stringify(line));
      assert.not.match(line, /[\n\r]/);
      assert.ok(line.length < 600, `${line.length} characters`);
    }
  };
  for (const name of HOSTILE_NAMES) check(name);
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300 }), (text) => check(`${text}.class`)),
    { numRuns: 200 },
  );
});

decide.run();

// The property: JARs of random entries, the floor and the refusals against a model of the rule.

type Drawn = {
  place: 'class' | 'overlay' | 'module-info';
  major: number;
  preview: boolean;
  stored: boolean;
  broken: 'magic' | 'short' | null;
};

const drawnEntry = fc.record({
  place: fc.constantFrom('class', 'class', 'class', 'overlay', 'module-info'),
  major: fc.integer({ min: 45, max: 75 }),
  preview: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
  stored: fc.boolean(),
  broken: fc.oneof(fc.constant(null), fc.constant(null), fc.constant(null), fc.constantFrom('magic', 'short')),
}) as fc.Arbitrary<Drawn>;

const nameOf = (entry: Drawn, index: number) =>
  entry.place === 'class'
    ? `p${index % 3}/C${index}.class`
    : entry.place === 'overlay'
      ? `META-INF/versions/${9 + (index % 17)}/p/C${index}.class`
      : index % 2
        ? `p${index}/module-info.class`
        : `META-INF/versions/${index}/module-info.class`;

function bytesOf(entry: Drawn): Uint8Array {
  if (entry.broken === 'short') return classBytes(entry.major).subarray(0, 1 + (entry.major % 7));
  const bytes = classBytes(entry.major, entry.preview ? 0xffff : entry.major % 3, 40 + entry.major);
  if (entry.broken === 'magic') bytes[entry.major % 4]! ^= 0x20;
  return bytes;
}

/** The rule, as plainly as it can be said. */
function model(entries: Drawn[], claimed: JavaVersion | undefined) {
  const counted = entries
    .map((entry, index) => ({ ...entry, name: nameOf(entry, index) }))
    .filter((e) => e.place === 'class');
  const broken = counted.find((entry) => entry.broken !== null);
  if (broken) return { refused: 'unreadable', entry: broken.name } as const;
  if (counted.length === 0) return claimed ? ({ java: claimed } as const) : ({ refused: 'none' } as const);
  const top = Math.max(...counted.map((entry) => entry.major));
  const first = counted.find((entry) => entry.major === top)!;
  const preview = counted.find((entry) => entry.preview);
  if (preview) return { refused: 'preview', entry: preview.name } as const;
  const java = JAVA_VERSIONS.find((v) => classFileOf(v) >= top);
  if (!java) return { refused: 'unlisted', entry: first.name } as const;
  if (claimed && JAVA_VERSIONS.indexOf(claimed) < JAVA_VERSIONS.indexOf(java))
    return { refused: 'below', entry: first.name } as const;
  return { java: claimed ?? java, classFileVersion: top } as const;
}

const property = suite('the floor and the refusals, against a model');

property('random mixes of class versions, overlays, module-info, stored and deflated entries', () => {
  fc.assert(
    fc.property(
      fc.array(drawnEntry, { maxLength: 12 }),
      fc.option(fc.constantFrom(...JAVA_VERSIONS), { nil: undefined }),
      (entries, claimed) => {
        const zippable: Zippable = {};
        entries.forEach((entry, index) => {
          zippable[nameOf(entry, index)] = [bytesOf(entry), { level: entry.stored ? 0 : 6 }];
        });
        const decided = decideJava(readClassFiles(jarOf(zippable)), claimed, context);
        const expected = model(entries, claimed);
        if ('java' in expected) {
          assert.equal(decided, { ok: true, ...expected });
          if (expected.classFileVersion !== undefined)
            assert.is(listedJavaFor(expected.classFileVersion) !== undefined, true);
          return;
        }
        assert.is(decided.ok, false, JSON.stringify({ decided, expected }));
        if (decided.ok) return;
        const reason = {
          unreadable: / is not a class file: /,
          none: /^A\.jar holds no class outside META-INF\/versions\//,
          preview: / is compiled with --enable-preview for Java /,
          unlisted: /\), which the depot does not list \(/,
          below:
            / would offer it to Java \d+ servers, which cannot load it; pass --java \d+, or compile with --release \d+$/,
        }[expected.refused];
        assert.match(decided.line, reason);
        if ('entry' in expected) assert.ok(decided.line.startsWith(`${expected.entry} `), decided.line);
        assert.is(decided.wrong, expected.refused === 'none' || expected.refused === 'below' ? 'javaVersion' : 'jar');
      },
    ),
    { numRuns: 500 },
  );
});

property.run();
