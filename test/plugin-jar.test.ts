import { strFromU8, unzipSync } from 'fflate';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makePluginJar, type PluginJarContents } from '../build/plugin-jar.ts';

const MakePluginJar = suite('makePluginJar');

const cases: [string, PluginJarContents, string[]][] = [
  [
    'a descriptor only',
    { files: { 'plugin.yml': 'name: A\nversion: 1.0.0\nmain: a.A\n' } },
    ['META-INF/MANIFEST.MF', 'plugin.yml'],
  ],
  [
    'manifest attributes and several files, in order',
    { manifest: { 'Created-By': 'test' }, files: { 'bungee.yml': 'x', 'README.txt': 'y' } },
    ['META-INF/MANIFEST.MF', 'bungee.yml', 'README.txt'],
  ],
  [
    'filler last',
    { files: { 'plugin.yml': 'z' }, filler: 4096 },
    ['META-INF/MANIFEST.MF', 'plugin.yml', 'assets/blob.bin'],
  ],
];

for (const [name, contents, entries] of cases) {
  MakePluginJar(`${name}: entries, and the same bytes twice`, () => {
    const jar = makePluginJar(contents);
    assert.equal(Object.keys(unzipSync(jar)), entries);
    assert.equal(makePluginJar(contents), jar);
  });
}

MakePluginJar('the manifest starts with Manifest-Version and ends with a blank line', () => {
  const manifest = strFromU8(
    unzipSync(makePluginJar({ manifest: { 'Created-By': 'test' }, files: {} }))['META-INF/MANIFEST.MF']!,
  );
  assert.is(manifest, 'Manifest-Version: 1.0\r\nCreated-By: test\r\n\r\n');
});

MakePluginJar('the filler is stored, so the JAR is about the size asked', () => {
  const size = 256 * 1024;
  const jar = makePluginJar({ files: {}, filler: size });
  assert.ok(jar.length > size && jar.length < size + 1024, `${jar.length} bytes`);
});

MakePluginJar.run();
