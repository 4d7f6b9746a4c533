import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createCatalog } from '../server/versions/catalog.ts';
import { catalogVersion } from '../server/versions/catalog-version.ts';
import { JAVA_VERSIONS, type JavaVersion } from '../server/versions/java.ts';
import {
  MINECRAFT_NAME,
  highestMinecraft,
  isAfterMinecraft,
  isValidRange,
  parseMinecraftList,
  supportsMinecraft,
  type MinecraftRange,
} from '../server/versions/minecraft.ts';
import { MINECRAFT_JAVA, guaranteedJavaOf, minimumJavaOf } from '../server/versions/minecraft-java.ts';
import { resolveBuild } from '../server/versions/resolve.ts';
import { PluginVersionRecord } from '../server/versions/schema.ts';
import { MinecraftOption } from '../server/publish/change-requests.ts';
import { ROOT } from './helpers.ts';

// Issue 39, item 3: Minecraft's year numbering (26.1, 26.1.1) and its pre-releases
// (26.2-snapshot-1, 26.2-pre-1, 26.2-rc-1); item 4: the least Java per Minecraft version.

const grammar = suite('the names ?minecraft= takes (MINECRAFT_NAME)');
const NAMES: [string, boolean][] = [
  ['1.21', true],
  ['1.21.4', true],
  ['1.8.8', true],
  ['26.1', true],
  ['26.1.1', true],
  ['26.2-snapshot-1', true],
  ['26.2-pre-1', true],
  ['26.2-rc-1', true],
  ['26.1.1-rc-2', true],
  ['27.1-snapshot-12', true],
  ['1.21.x', false], // a range's end, not a version a server runs
  ['26.1.x', false],
  ['24w14a', false], // an old snapshot name: no order, so not a server's version to ask about
  ['1.21-pre1', false],
  ['1.21.5-pre-1', false], // 26.x naming before 26.x
  ['25.4-snapshot-1', false],
  ['26.2-snapshot', false],
  ['26.2-beta-1', false],
  ['26.2-SNAPSHOT-1', false],
  ['26.2-snapshot-1-1.21', false],
  ['latest', false],
];
for (const [name, taken] of NAMES)
  grammar(`${JSON.stringify(name)}: ${taken ? 'taken' : '400'}`, () => assert.is(MINECRAFT_NAME.test(name), taken));
grammar.run();

const order = suite('the order: every 1.x, then each 26.x target as snapshot < pre < rc < release');
/** Oldest first: each name is after every earlier one (isAfterMinecraft) and after none later. */
const ORDERED = [
  '1.8.8',
  '1.16.5',
  '1.21',
  '1.21.4',
  '1.21.10',
  '1.21.11',
  '26.1-snapshot-1',
  '26.1-snapshot-2',
  '26.1-pre-1',
  '26.1-rc-1',
  '26.1',
  '26.1.1',
  '26.2-snapshot-1',
  '26.2-snapshot-10',
  '26.2-pre-1',
  '26.2-pre-2',
  '26.2-rc-1',
  '26.2',
  '27.1-snapshot-1',
  '27.1',
];
order(`each of ${ORDERED.length} names is after exactly those before it`, () => {
  ORDERED.forEach((later, i) =>
    ORDERED.forEach((earlier, j) => assert.is(isAfterMinecraft(later, earlier), i > j, `${later} after ${earlier}`)),
  );
});
order('Paper hard-forked at 1.21.4: 26.x names are after it; old snapshot names after nothing', () => {
  for (const name of ['26.1', '26.1.x', '26.2-snapshot-1', '1.21.5', '1.21.x'])
    assert.ok(isAfterMinecraft(name, '1.21.4'), name);
  for (const name of ['24w14a', '1.21.5-pre1', '1.21.4', '1.21']) assert.not.ok(isAfterMinecraft(name, '1.21.4'), name);
});
order('the highest of a list is by that order (what minecraftVersion holds)', () => {
  const cases: [string, string][] = [
    ['1.21.10-26.1.x', '26.1.x'],
    ['26.1.x,26.2-snapshot-1', '26.2-snapshot-1'],
    ['26.2-rc-1,26.1.1,1.21.4', '26.2-rc-1'],
    ['1.20.6-1.21.4,1.19.x', '1.21.4'],
  ];
  for (const [text, highest] of cases)
    assert.is(highestMinecraft(parseMinecraftList(text) as MinecraftRange[]), highest);
});
order.run();

const lists = suite('parseMinecraftList and MinecraftOption: what --minecraft and minecraftVersions take');
const PARSED: [string, MinecraftRange[]][] = [
  ['26.1', [{ from: '26.1', to: '26.1' }]],
  ['26.1.1', [{ from: '26.1.1', to: '26.1.1' }]],
  ['26.1.x', [{ from: '26.1', to: '26.1.x' }]],
  ['1.21.10-26.1.x', [{ from: '1.21.10', to: '26.1.x' }]],
  ['26.2-snapshot-1', [{ from: '26.2-snapshot-1', to: '26.2-snapshot-1' }]],
  [
    '26.1.x, 26.2-pre-1',
    [
      { from: '26.1', to: '26.1.x' },
      { from: '26.2-pre-1', to: '26.2-pre-1' },
    ],
  ],
];
for (const [text, ranges] of PARSED)
  lists(`${text}: ${JSON.stringify(ranges)}`, () => {
    assert.equal(parseMinecraftList(text), ranges);
    assert.equal(MinecraftOption.parse(text), ranges);
    for (const range of ranges) assert.ok(isValidRange(range), JSON.stringify(range));
  });
const REFUSED: [string, RegExp][] = [
  ['26.1-1.21.10', /"26\.1-1\.21\.10" runs backwards; write the lower version first/],
  ['26.2-26.1.x', /runs backwards/],
  ['26.1-26.2-snapshot-1', /is not a 26\.x pre-release alone: a pre-release .* is never a range's end/],
  ['26.2-snapshot-1-26.2', /is never a range's end/],
  ['1.21.5-pre-1', /is not a 26\.x pre-release alone/],
  ['26.2-beta-1', /is not a version, a range or a minor version; write 1\.21\.4, 1\.20\.6-1\.21\.4 or 1\.21\.x/],
];
for (const [text, message] of REFUSED)
  lists(`${text}: refused`, () => {
    const parsed = parseMinecraftList(text);
    assert.type(parsed, 'string');
    assert.match(parsed as string, message);
  });
lists('older names stay as written, matching only themselves, as before 26.x', () => {
  for (const name of ['24w14a', '1.21.5-pre1', '1.21-rc1']) assert.is(MinecraftOption.parse(name), name);
});
lists('a stored range is a range of releases, or one 26.x pre-release from and to itself', () => {
  assert.ok(isValidRange({ from: '1.21.10', to: '26.1.x' }));
  assert.not.ok(isValidRange({ from: '26.1', to: '26.2-rc-1' }));
  assert.not.ok(isValidRange({ from: '26.2-snapshot-1', to: '26.2-pre-1' }));
  assert.not.ok(isValidRange({ from: '26.2', to: '26.1.1' }));
});
lists.run();

const matching = suite('supportsMinecraft: 26.x releases by range, a pre-release only by builds that name it');
const ACROSS = [{ from: '1.21.10', to: '26.1.x' }];
const MATCHES: [string, { minecraftVersion?: string; minecraftVersions?: MinecraftRange[] }, string[], string[]][] = [
  [
    '1.21.10-26.1.x',
    { minecraftVersion: '26.1.x', minecraftVersions: ACROSS },
    ['1.21.10', '1.21.11', '26.1', '26.1.1', '26.1.20'],
    ['1.21.9', '1.21', '26.2', '26.1-snapshot-1', '26.1-rc-1', '26.1.1-rc-1', '26.2-snapshot-1'],
  ],
  ['26.1', { minecraftVersion: '26.1' }, ['26.1', '26.1.0'], ['26.1.1', '26.1-rc-1', '1.21.11']],
  [
    '26.2-snapshot-1 alone',
    { minecraftVersion: '26.2-snapshot-1' },
    ['26.2-snapshot-1'],
    ['26.2', '26.2-snapshot-2', '26.2-pre-1', '26.1.1'],
  ],
  [
    '26.1.x and 26.2-pre-1',
    {
      minecraftVersion: '26.2-pre-1',
      minecraftVersions: [
        { from: '26.1', to: '26.1.x' },
        { from: '26.2-pre-1', to: '26.2-pre-1' },
      ],
    },
    ['26.1', '26.1.3', '26.2-pre-1'],
    ['26.2-pre-2', '26.2-snapshot-1', '26.2', '1.21.11'],
  ],
  ['a proxy build (no version)', {}, ['26.1', '26.2-snapshot-1', '1.8.8'], []],
];
for (const [what, record, inside, outside] of MATCHES)
  matching(`${what}: runs on ${inside.join(', ')}; not on ${outside.join(', ') || 'none'}`, () => {
    for (const asked of inside) assert.ok(supportsMinecraft(record, asked), asked);
    for (const asked of outside) assert.not.ok(supportsMinecraft(record, asked), asked);
  });
matching.run();

const java = suite("Minecraft's own least Java per version (MINECRAFT_JAVA)");
const JAVA_OF: [string, number, JavaVersion][] = [
  ['1.8.8', 8, '8'],
  ['1.16.5', 8, '8'],
  ['1.17', 16, '11'], // Java 16 lists no build above Java 11
  ['1.17.1', 16, '11'],
  ['1.18', 17, '17'],
  ['1.20.4', 17, '17'],
  ['1.20.5', 21, '21'],
  ['1.21.4', 21, '21'],
  ['1.21.11', 21, '21'],
  ['26.1-snapshot-1', 25, '25'], // a pre-release runs what its release runs
  ['26.1-rc-1', 25, '25'],
  ['26.1', 25, '25'],
  ['26.1.1', 25, '25'],
  ['26.2-snapshot-1', 25, '25'],
];
for (const [minecraft, least, listed] of JAVA_OF)
  java(`${minecraft}: Java ${least}, builds up to Java ${listed}`, () => {
    assert.is(minimumJavaOf(minecraft), least);
    assert.is(guaranteedJavaOf(minecraft), listed);
  });
java('one line per generation, oldest first: each line holds from its since to its last', () => {
  MINECRAFT_JAVA.forEach((line, i) => {
    assert.is(minimumJavaOf(line.since), line.java, line.since);
    if (line.last) assert.is(minimumJavaOf(line.last), line.java, line.last);
    const next = MINECRAFT_JAVA[i + 1];
    if (next) assert.ok(isAfterMinecraft(next.since, line.last ?? line.since), next.since);
    if (i > 0) assert.ok(line.java > MINECRAFT_JAVA[i - 1]!.java);
  });
});
java("a proxy's Java is its own: the cap holds for game servers, whatever Minecraft version a proxy names", () => {
  const build = (id: string, serverSoftware: string[]) =>
    catalogVersion(
      PluginVersionRecord.parse({
        ...{ id: `plugin-1-${id}`, serverSoftware, pluginVersion: '1.0.0', javaVersion: '25', proxyVersion: null },
        ...{ fileName: `${id}.jar`, fileSize: 1, sha256: '0'.repeat(64), createdBy: 'test' },
        ...{ createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' },
      }),
      '0'.repeat(128),
    );
  const versions = createCatalog([build('velocity', ['Velocity']), build('paper', ['PaperMC'])], []).versions;
  const pick = (software: 'Velocity' | 'PaperMC', minecraft: string) =>
    resolveBuild(versions, { software, minecraft, channel: 'release' })?.version.id;
  assert.is(pick('Velocity', '1.21.11'), 'plugin-1-velocity');
  assert.is(pick('Velocity', '1.8.8'), 'plugin-1-velocity');
  // A game server's build that states no Minecraft version runs on every one, on the Java it guarantees.
  assert.is(pick('PaperMC', '1.21.11'), undefined);
  assert.is(pick('PaperMC', '26.1'), 'plugin-1-paper');
});
java("docs/api.md's table says what MINECRAFT_JAVA holds, one row per line, in order", async () => {
  const docs = await readFile(join(ROOT, 'docs/api.md'), 'utf8');
  const table = docs.split("**Minecraft's minimum Java**")[1]!.split('\n\n')[1]!.split('\n').slice(2);
  assert.is(table.length, MINECRAFT_JAVA.length);
  table.forEach((row, i) => {
    const [, versions = '', least = ''] = row.split('|').map((cell) => cell.trim());
    const line = MINECRAFT_JAVA[i]!;
    assert.is(least, String(line.java), row);
    if (i > 0) assert.ok(versions.startsWith(line.since), row);
    if (line.last) assert.ok(versions.endsWith(line.last), row);
  });
});
java.run();

// Properties: the order against a model (tuples compared in order), and the Java cap against the table.
const STAGE = ['snapshot', 'pre', 'rc'] as const;
/** A name and its model key: [major, minor, patch, stage (3 = release), number]. */
type Drawn = { name: string; key: number[] };
const legacy = fc
  .tuple(fc.integer({ min: 0, max: 21 }), fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }))
  .map(([minor, patch]): Drawn => ({
    name: patch === undefined ? `1.${minor}` : `1.${minor}.${patch}`,
    key: [1, minor, patch ?? 0, 3, 0],
  }));
const yearly = fc
  .tuple(
    fc.integer({ min: 26, max: 30 }),
    fc.integer({ min: 1, max: 4 }),
    fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    fc.option(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 1, max: 12 })), { nil: undefined }),
  )
  .map(([major, minor, patch, pre]): Drawn => {
    const release = patch === undefined ? `${major}.${minor}` : `${major}.${minor}.${patch}`;
    return {
      name: pre ? `${release}-${STAGE[pre[0]]}-${pre[1]}` : release,
      key: [major, minor, patch ?? 0, pre ? pre[0] : 3, pre ? pre[1] : 0],
    };
  });
const drawn = fc.oneof(legacy, yearly);
const modelCompare = (a: number[], b: number[]) => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
};
const isPre = (d: Drawn) => d.key[3]! < 3;

const properties = suite('properties: the order and the Java cap');
properties('isAfterMinecraft is the model order: 1.x < 26.x snapshot < pre < rc < 26.x release', () => {
  fc.assert(
    fc.property(drawn, drawn, (a, b) => {
      assert.ok(MINECRAFT_NAME.test(a.name), a.name);
      assert.is(isAfterMinecraft(a.name, b.name), modelCompare(a.key, b.key) > 0, `${a.name} after ${b.name}`);
    }),
    { numRuns: 2000 },
  );
});
properties('a range of releases holds the releases between its ends and never a pre-release', () => {
  const release = drawn.filter((d) => !isPre(d));
  fc.assert(
    fc.property(release, release, drawn, (x, y, asked) => {
      const [from, to] = modelCompare(x.key, y.key) <= 0 ? [x, y] : [y, x];
      const ranges = parseMinecraftList(`${from.name}-${to.name}`);
      assert.ok(Array.isArray(ranges), String(ranges));
      const record = { minecraftVersion: to.name, minecraftVersions: ranges as MinecraftRange[] };
      const between = modelCompare(from.key, asked.key) <= 0 && modelCompare(asked.key, to.key) <= 0;
      assert.is(
        supportsMinecraft(record, asked.name),
        between && !isPre(asked),
        `${asked.name} in ${from.name}-${to.name}`,
      );
      // A pre-release is matched by a build that names it, and by no other name.
      if (isPre(asked)) {
        assert.ok(supportsMinecraft({ minecraftVersion: asked.name }, asked.name));
        assert.not.ok(supportsMinecraft({ minecraftVersion: asked.name }, to.name));
      }
    }),
    { numRuns: 1000 },
  );
});

/** A build drawn for the cap: its Java and the Minecraft versions it names. */
const build = fc.record({
  java: fc.constantFrom(...JAVA_VERSIONS),
  from: drawn.filter((d) => !isPre(d)),
  to: drawn.filter((d) => !isPre(d)),
  day: fc.integer({ min: 1, max: 28 }),
});
properties(
  'resolve with ?minecraft= and no Java offers the newest build for it whose Java every such server runs',
  () => {
    fc.assert(
      fc.property(fc.array(build, { minLength: 1, maxLength: 8 }), drawn, (builds, asked) => {
        const records = builds.map((b, i) => {
          const [from, to] = modelCompare(b.from.key, b.to.key) <= 0 ? [b.from, b.to] : [b.to, b.from];
          const parsed = PluginVersionRecord.parse({
            ...{ id: `plugin-${i}-b${i}`, serverSoftware: ['PaperMC'], pluginVersion: `1.0.${i}` },
            ...{ javaVersion: b.java, fileName: `b${i}.jar`, fileSize: 1, sha256: '0'.repeat(64) },
            ...{ minecraftVersion: to.name, minecraftVersions: [{ from: from.name, to: to.name }] },
            createdAt: new Date(Date.UTC(2026, 0, b.day, 0, 0, i)).toISOString(),
            updatedAt: '2026-02-01T00:00:00.000Z',
            createdBy: 'test',
          });
          return catalogVersion(parsed, '0'.repeat(128));
        });
        const versions = createCatalog(records, []).versions;
        const cap = minimumJavaOf(asked.name);
        const found = resolveBuild(versions, { software: 'PaperMC', minecraft: asked.name, channel: 'release' });
        const model = versions.find((v) => Number(v.javaVersion) <= cap && supportsMinecraft(v, asked.name));
        assert.is(found?.version.id, model?.id, `${asked.name}: Java at most ${cap}`);
        // Naming a Java keeps today's rule: that Java, whatever the Minecraft version guarantees.
        const on25 = resolveBuild(versions, {
          software: 'PaperMC',
          java: '25',
          minecraft: asked.name,
          channel: 'release',
        });
        assert.is(on25?.version.id, versions.find((v) => supportsMinecraft(v, asked.name))?.id);
      }),
      { numRuns: 500 },
    );
  },
);
properties.run();
