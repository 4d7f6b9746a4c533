import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createCatalog } from '../server/versions/catalog.ts';
import { isLatestMap, pickLatest } from '../server/versions/latest.ts';
import type { PluginVersionRecord } from '../server/versions/schema.ts';
import type { JavaVersion, ServerSoftware } from '../server/versions/software.ts';

function record(
  id: string,
  software: ServerSoftware[],
  java: JavaVersion,
  createdAt: string,
  pluginVersion = '1.0.0',
): PluginVersionRecord {
  return {
    id: `plugin-1-${id}`,
    serverSoftware: software,
    pluginVersion,
    javaVersion: java,
    fileName: `${id}.jar`,
    fileSize: 1,
    sha256: '0'.repeat(64),
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
