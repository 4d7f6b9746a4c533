import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openApiDocument } from '../server/openapi.ts';
import { canonicalPagePath } from '../server/pages.ts';
import { END_OF_LIFE, RUNS_FOLIA_SUPPORTED, RUNS_PLUGINS_OF, describeChain } from '../server/versions/compat.ts';
import { checkClaims } from '../server/versions/descriptor-check.ts';
import { loaderOf, softwareOfLoader } from '../server/versions/modrinth-loaders.ts';
import { GROUPS, SERVER_SOFTWARE, SOFTWARE, SOFTWARE_GROUPS } from '../server/versions/software.ts';
import { JAVA, JAVA_VERSIONS, classFileOf, javaOfClassFile, listedJavaFor } from '../server/versions/java.ts';
import { ROOT } from './helpers.ts';

// Issue 39, item 5: each software is one record, and what used to be spread over five files is
// derived from it. These cases hold the derived tables to the facts SPEC and the docs state.

const records = suite('one record per software');

records('SPEC 2.3: the groups, in the order SPEC lists them', () => {
  assert.equal(SOFTWARE_GROUPS, {
    normal: ['PaperMC', 'Spigot', 'Bukkit', 'Purpur', 'Quilt', 'LeafMC'],
    folia: ['Folia', 'CanvasMC'],
    proxy: ['BungeeCord', 'Waterfall', 'Velocity'],
  });
  assert.equal(
    GROUPS.flatMap((group) => SOFTWARE_GROUPS[group]),
    [...SERVER_SOFTWARE],
  );
});

records('the chain table: each software first, then what it runs; Folia and CanvasMC take folia-supported', () => {
  assert.equal(RUNS_PLUGINS_OF.LeafMC, ['LeafMC', 'PaperMC', 'Purpur', 'Spigot', 'Bukkit', 'Folia']);
  assert.equal(RUNS_PLUGINS_OF.Velocity, ['Velocity']);
  assert.equal(RUNS_FOLIA_SUPPORTED, ['Folia', 'CanvasMC']);
  assert.equal(Object.keys(END_OF_LIFE), ['Waterfall']);
  assert.is(END_OF_LIFE.Waterfall?.successor, 'Velocity');
});

records('Modrinth loader names: the first is what answers say; every name finds its software', () => {
  assert.is(loaderOf('PaperMC'), 'paper');
  for (const software of SERVER_SOFTWARE)
    for (const name of SOFTWARE[software].modrinthLoaders) assert.is(softwareOfLoader(name.toUpperCase()), software);
});

records('page aliases redirect to the software they name', () => {
  for (const software of SERVER_SOFTWARE)
    for (const alias of SOFTWARE[software].pageAliases)
      assert.is(canonicalPagePath(`/versions/${alias}/21`), `/versions/${software.toLowerCase()}/21`);
});

records('every software but Quilt has a descriptor that backs a claim: a JAR with none is refused for it', () => {
  for (const software of SERVER_SOFTWARE) {
    const problems = checkClaims({}, [software]);
    assert.is(problems.length, software === 'Quilt' ? 0 : 1, software);
  }
});

records('docs/api.md shows the chain table derived from the records, row for row', async () => {
  const docs = await readFile(join(ROOT, 'docs/api.md'), 'utf8');
  for (const software of SERVER_SOFTWARE)
    assert.ok(
      docs.includes(`  | ${software} | ${describeChain(software)} | ${SOFTWARE[software].source} |\n`),
      `docs/api.md's row for ${software}`,
    );
});

records("the API reference's resolve description names every software's chain", () => {
  const resolve = openApiDocument().paths?.['/api/plugin-versions/resolve/{serverSoftware}']?.get?.description ?? '';
  for (const software of SERVER_SOFTWARE) assert.ok(resolve.includes(`${software}: ${describeChain(software)}`));
});

records.run();

const java = suite('the Java table');

java('Java 8 to 25 with their class-file major versions, oldest first', () => {
  assert.equal([...JAVA_VERSIONS], ['8', '11', '17', '21', '25']);
  assert.equal(
    JAVA.map((row) => row.classFile),
    [52, 55, 61, 65, 69],
  );
});

const CLASS_FILES: [major: number, java: number, listed: string | undefined][] = [
  [45, 1, '8'],
  [52, 8, '8'],
  [53, 9, '11'],
  [60, 16, '17'],
  [61, 17, '17'],
  [65, 21, '21'],
  [66, 22, '25'],
  [69, 25, '25'],
  [70, 26, undefined],
];
for (const [major, release, listed] of CLASS_FILES)
  java(`class file ${major}: Java ${release}, run by the listed Java ${listed ?? '(none)'}`, () => {
    assert.is(javaOfClassFile(major), release);
    assert.is(listedJavaFor(major), listed);
    if (listed) assert.ok(classFileOf(listed as (typeof JAVA_VERSIONS)[number]) >= major);
  });

java.run();

const docs = suite('docs/api.md');

docs('shows the Java table as server/versions/java.ts holds it', async () => {
  const text = await readFile(join(ROOT, 'docs/api.md'), 'utf8');
  const rows = JAVA.map(({ version, classFile }) => `  | ${version} | ${classFile} |`).join('\n');
  assert.ok(text.includes(`  | Java | class-file major version |\n  | --- | --- |\n${rows}\n`));
});

docs.run();
