import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createCatalog } from '../server/versions/catalog.ts';
import { isLatestMap, pickLatest } from '../server/versions/latest.ts';
import type { Channel } from '../server/versions/channels.ts';
import type { CatalogVersion } from '../server/versions/schema.ts';
import type { ServerSoftware } from '../server/versions/software.ts';
import type { JavaVersion } from '../server/versions/java.ts';

function record(
  id: string,
  software: ServerSoftware[],
  java: JavaVersion,
  createdAt: string,
  pluginVersion = '1.0.0',
): CatalogVersion {
  return {
    id: `plugin-1-${id}`,
    serverSoftware: software,
    pluginVersion,
    javaVersion: java,
    fileName: `${id}.jar`,
    fileSize: 1,
    sha256: '0'.repeat(64),
    sha512: '0'.repeat(128),
    createdAt,
    updatedAt: createdAt,
    createdBy: 'alice',
  };
}

const VERSIONS = [
  record('a', ['PaperMC', 'Folia', 'Purpur'], '21', '2026-01-01T00:00:00.000Z'),
  record('b', ['PaperMC', 'Purpur'], '21', '2026-02-01T00:00:00.000Z'), // newer for Paper+Purpur on 21, not Folia
  record('c', ['PaperMC'], '17', '2026-03-01T00:00:00.000Z'), // newer, but Java 17: 21's latest stays b
  record('d', ['Spigot'], '8', '2026-01-01T00:00:00.000Z', '1.0.0'),
  record('e', ['Spigot'], '8', '2026-01-01T00:00:00.000Z', '1.0.1'), // same createdAt: higher version wins
];
const catalog = createCatalog(VERSIONS, []);

const pick = suite('pickLatest');
const cases: [ServerSoftware, JavaVersion | undefined, string | undefined][] = [
  ['PaperMC', '21', 'b'],
  ['PaperMC', '17', 'c'],
  ['PaperMC', undefined, 'c'], // SPEC 2.4.4: newest whatever its Java version
  ['Folia', '21', 'a'],
  ['Folia', undefined, 'a'],
  ['Purpur', '21', 'b'],
  ['Spigot', '8', 'e'],
  ['Spigot', '21', undefined],
  ['Velocity', undefined, undefined],
];
for (const [software, java, expected] of cases) {
  pick(`${software} ${java ?? 'any Java'} -> ${expected ?? 'none'}`, () => {
    assert.is(pickLatest(catalog.latest, software, java)?.id, expected && `plugin-1-${expected}`);
  });
}
pick('ties in createdAt are broken the same way whatever the input order', () => {
  const reversed = createCatalog([...VERSIONS].reverse(), []);
  assert.is(pickLatest(reversed.latest, 'Spigot', '8')?.id, 'plugin-1-e');
  const sameVersion = [
    record('x1', ['Quilt'], '21', '2026-01-01T00:00:00.000Z'),
    record('x2', ['Quilt'], '21', '2026-01-01T00:00:00.000Z'),
  ];
  assert.is(pickLatest(createCatalog(sameVersion, []).latest, 'Quilt')?.id, 'plugin-1-x2');
  assert.is(pickLatest(createCatalog(sameVersion.reverse(), []).latest, 'Quilt')?.id, 'plugin-1-x2');
});
pick.run();

const map = suite('isLatestMap');
const mapCases: [string, Record<string, boolean>][] = [
  ['a', { PaperMC: false, Folia: true, Purpur: false }], // latest for one software, not the others
  ['b', { PaperMC: true, Purpur: true }], // a newer Java 17 version does not displace it on 21
  ['c', { PaperMC: true }],
  ['d', { Spigot: false }],
  ['e', { Spigot: true }],
];
for (const [id, expected] of mapCases) {
  map(`${id} -> ${JSON.stringify(expected)}`, () => {
    assert.equal(isLatestMap(catalog.latest, catalog.byId.get(`plugin-1-${id}`)!), expected);
  });
}
map.run();

const channels = suite('pickLatest and isLatestMap with channels');
const CHANNEL_VERSIONS = [
  record('r1', ['PaperMC'], '21', '2026-01-01T00:00:00.000Z', '1.0.0'),
  { ...record('b1', ['PaperMC'], '21', '2026-02-01T00:00:00.000Z', '1.1.0-beta.1'), channel: 'beta' as const },
  { ...record('a1', ['PaperMC'], '21', '2026-03-01T00:00:00.000Z', '1.2.0-alpha.1'), channel: 'alpha' as const },
  { ...record('r2', ['PaperMC'], '17', '2026-01-15T00:00:00.000Z', '1.0.1'), channel: 'release' as const },
  { ...record('b2', ['Velocity'], '21', '2026-01-01T00:00:00.000Z', '2.0.0-beta.1'), channel: 'beta' as const },
];
const channelCatalog = createCatalog(CHANNEL_VERSIONS, []);
const channelCases: [ServerSoftware, JavaVersion | undefined, Channel | undefined, string | undefined][] = [
  ['PaperMC', '21', undefined, 'r1'], // release unless asked
  ['PaperMC', '21', 'release', 'r1'],
  ['PaperMC', '21', 'beta', 'b1'], // beta and release
  ['PaperMC', '21', 'alpha', 'a1'], // all
  ['PaperMC', undefined, undefined, 'r2'], // SPEC 2.4.4 among releases: r2 is newer than r1
  ['PaperMC', undefined, 'beta', 'b1'],
  ['PaperMC', undefined, 'alpha', 'a1'],
  ['PaperMC', '17', 'alpha', 'r2'], // a more stable channel's version when the asked one has none newer
  ['Velocity', undefined, undefined, undefined], // only a beta: no release at all
  ['Velocity', '21', 'beta', 'b2'],
  ['Velocity', '21', 'alpha', 'b2'],
];
for (const [software, java, channel, expected] of channelCases) {
  channels(`${software} ${java ?? 'any Java'} ${channel ?? '(no channel)'} -> ${expected ?? 'none'}`, () => {
    assert.is(pickLatest(channelCatalog.latest, software, java, channel)?.id, expected && `plugin-1-${expected}`);
  });
}
channels('isLatest is read on the release channel: a beta or alpha version is never latest there', () => {
  const isLatest = (id: string) => isLatestMap(channelCatalog.latest, channelCatalog.byId.get(`plugin-1-${id}`)!);
  assert.equal(isLatest('r1'), { PaperMC: true });
  assert.equal(isLatest('b1'), { PaperMC: false });
  assert.equal(isLatest('a1'), { PaperMC: false });
  assert.equal(isLatest('b2'), { Velocity: false });
});
channels('records without a channel pick exactly what SPEC 2.4 picks, in every channel', () => {
  for (const [software, java] of cases) {
    const spec = pickLatest(catalog.latest, software, java);
    for (const channel of ['release', 'beta', 'alpha'] as const)
      assert.is(pickLatest(catalog.latest, software, java, channel), spec, `${software} ${java} ${channel}`);
  }
});
channels.run();
