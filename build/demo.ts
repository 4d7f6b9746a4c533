// Writes the demo content of data/: small, valid plugin JARs made here (the repository ships no
// third-party files), their records and three users. Deterministic: same script, same bytes.
// Run with `npm run demo`; the output is committed so a fresh clone serves something real.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readConfig } from '../server/config.ts';
import { changelogPath, jarPath, jarsDir, recordPath, versionsDir } from '../server/versions/catalog.ts';
import type { Channel } from '../server/versions/channels.ts';
import { sha256Hex } from '../server/helpers/digest.ts';
import { PluginVersionRecord, UserProfiles } from '../server/versions/schema.ts';
import { isProxy, type ServerSoftware } from '../server/versions/software.ts';
import { writeDemoBrands } from './demo-brands.ts';
import { writeDemoProject } from './demo-project.ts';
import { makePluginJar } from './plugin-jar.ts';
import { checkDescriptors } from './changes/descriptors.ts';
import { minecraftFields } from './changes/release.ts';
import { checkJava } from './changes/java.ts';
import { DEMO_CLASS_ENTRY, compileDemoClasses } from './demo-classes.ts';
import { parseMinecraftList } from '../server/versions/minecraft.ts';
import type { JavaVersion } from '../server/versions/java.ts';

type Demo = {
  /** The id's last part: fixed, so ids stay the same when the JAR's bytes change (a class added). */
  idSuffix: string;
  version: string;
  java: JavaVersion;
  software: ServerSoftware[];
  at: string;
  by: string;
  /** As `--minecraft` takes it: a version, a range or a minor version such as 26.1.x. */
  minecraft?: string;
  proxy?: string;
  channel?: Channel;
  /** Markdown, written to data/versions/<id>.md. */
  changelog?: string;
};

const DEMO_VERSIONS: Demo[] = [
  {
    idSuffix: 'f8d161e085',
    version: '1.0.0',
    java: '8',
    software: ['Spigot', 'Bukkit'],
    at: '2026-01-10T09:00:00.000Z',
    by: 'alice',
    minecraft: '1.8.8',
  },
  {
    idSuffix: '7e709249d7',
    version: '1.0.0',
    java: '8',
    software: ['BungeeCord', 'Waterfall'],
    at: '2026-01-10T09:05:00.000Z',
    by: 'alice',
    proxy: '1.20',
  },
  {
    idSuffix: '7df86bd75d',
    version: '1.0.1',
    java: '8',
    software: ['Spigot'],
    at: '2026-01-20T12:00:00.000Z',
    by: 'bob',
    minecraft: '1.12.2',
  },
  {
    idSuffix: '6f003c62f0',
    version: '1.1.0',
    java: '11',
    software: ['PaperMC', 'Spigot', 'Bukkit'],
    at: '2026-02-14T10:30:00.000Z',
    by: 'alice',
    minecraft: '1.16.5',
  },
  {
    idSuffix: '767405b112',
    version: '1.2.0',
    java: '17',
    software: ['PaperMC', 'Folia', 'Purpur'],
    at: '2026-03-21T08:00:00.000Z',
    by: 'alice',
    minecraft: '1.20.4',
  },
  {
    idSuffix: 'a5c3e0687b',
    version: '1.2.0',
    java: '17',
    software: ['Velocity'],
    at: '2026-03-21T08:10:00.000Z',
    by: 'bob',
    proxy: '3.3.0',
  },
  {
    idSuffix: 'b878942086',
    version: '1.3.0',
    java: '21',
    software: ['PaperMC', 'Folia', 'Purpur'],
    at: '2026-06-02T15:00:00.000Z',
    by: 'alice',
    minecraft: '1.21.4',
    changelog: [
      '## 1.3.0',
      '',
      '- Runs on Minecraft 1.21.4 and Java 21.',
      '- Folia: region-aware scheduling for every task.',
      '- `/depot reload` reloads the configuration without a restart.',
      '',
    ].join('\n'),
  },
  {
    idSuffix: 'cdd49d17d1',
    version: '1.3.0',
    java: '17',
    software: ['Spigot', 'Bukkit'],
    at: '2026-06-02T15:05:00.000Z',
    by: 'alice',
    minecraft: '1.20.6',
  },
  {
    idSuffix: '28db67d578',
    version: '1.3.0',
    java: '21',
    software: ['Velocity'],
    at: '2026-06-02T15:10:00.000Z',
    by: 'carol',
    proxy: '3.4.0',
    changelog:
      '## 1.3.0\n\nVelocity 3.4 support. Player counts are now sent **once a minute** instead of every 10 seconds.\n',
  },
  {
    idSuffix: 'f1ded09995',
    version: '1.3.0',
    java: '11',
    software: ['BungeeCord', 'Waterfall'],
    at: '2026-06-02T15:15:00.000Z',
    by: 'carol',
    proxy: '1.21',
  },
  {
    idSuffix: 'af86d0a868',
    version: '1.3.0',
    java: '21',
    software: ['Quilt', 'LeafMC'],
    at: '2026-06-02T15:20:00.000Z',
    by: 'ci-bot',
    minecraft: '1.21.4',
  },
  {
    idSuffix: 'a53d5a0a9e',
    version: '1.3.0',
    java: '21',
    software: ['CanvasMC'],
    at: '2026-06-02T15:25:00.000Z',
    by: 'ci-bot',
    minecraft: '1.21.4',
  },
  {
    idSuffix: '7f26410443',
    version: '1.4.0',
    java: '17',
    software: ['PaperMC', 'Purpur'],
    at: '2026-09-15T11:00:00.000Z',
    by: 'bob',
    minecraft: '1.21.1',
    changelog: [
      '## 1.4.0',
      '',
      '- New: per-world settings in `config.yml`.',
      '- Fixed: a crash on shutdown when the database was unreachable.',
      '',
      'See the [upgrade notes](https://example.org/depotdemo/upgrade-1.4) before updating.',
      '',
    ].join('\n'),
  },
  {
    idSuffix: 'fbf68fcdf0',
    version: '1.5.0-beta.1',
    java: '21',
    software: ['LeafMC'],
    at: '2026-10-30T18:45:00.000Z',
    by: 'alice',
    minecraft: '1.21.10',
    channel: 'beta',
    changelog: [
      '## 1.5.0-beta.1',
      '',
      'A **beta** for LeafMC on Minecraft 1.21.10: try it on a test server first.',
      '',
      '- New storage format; a world converted by this beta cannot go back to 1.3.0.',
      '- Known issue: the `/depot stats` command is slow on large worlds.',
      '',
    ].join('\n'),
  },
  {
    idSuffix: 'cd8206ff60',
    version: '2.0.0',
    java: '25',
    software: ['PaperMC', 'Purpur', 'Folia'],
    at: '2026-11-24T10:00:00.000Z',
    by: 'alice',
    minecraft: '26.1-26.1.1',
    changelog: [
      '## 2.0.0',
      '',
      '- For Minecraft 26.1 and 26.1.1, on Java 25, which 26.1 servers run.',
      '- Servers still on 1.21.x keep 1.4.0 (Java 17) and 1.3.0 (Java 21).',
      '',
    ].join('\n'),
  },
];

const DEMO_USERS = UserProfiles.parse([
  {
    id: 'user-alice',
    username: 'alice',
    nickname: 'Alice the Maintainer',
    image: 'https://avatars.example.org/alice.png',
  },
  { id: 'user-bob', username: 'bob', nickname: null },
  { id: 'user-carol', username: 'carol', image: 'https://avatars.example.org/carol.png' },
]);

const PLUGIN = { name: 'DepotDemo', main: 'org.example.depotdemo.DepotDemo', author: 'plugin depot' };

/** The descriptors the platforms read, truthful for the softwares each build is released for (issue 31: checked at release). */
function descriptors(demo: Demo): Record<string, string> {
  const files: Record<string, string> = {};
  // Paper's api-version: the major and minor of the highest Minecraft version (26.1 for 26.1-26.1.1).
  const highest =
    demo.minecraft === undefined ? undefined : minecraftFields(demoMinecraft(demo.minecraft)).minecraftVersion;
  const api = highest?.split('.').slice(0, 2).join('.');
  if (demo.software.includes('Velocity')) {
    files['velocity-plugin.json'] = JSON.stringify({
      id: 'depotdemo',
      name: PLUGIN.name,
      version: demo.version,
      main: PLUGIN.main,
      authors: [PLUGIN.author],
    });
  }
  if (demo.software.some((s) => s === 'BungeeCord' || s === 'Waterfall')) {
    files['bungee.yml'] =
      `name: ${PLUGIN.name}\nversion: ${demo.version}\nmain: ${PLUGIN.main}\nauthor: ${PLUGIN.author}\n`;
  }
  const servers = demo.software.filter((s) => !isProxy(s));
  if (servers.length > 0) {
    files['plugin.yml'] =
      `name: ${PLUGIN.name}\nversion: ${demo.version}\nmain: ${PLUGIN.main}\nauthor: ${PLUGIN.author}\n${api ? `api-version: '${api}'\n` : ''}${servers.some((s) => s === 'Folia' || s === 'CanvasMC') ? 'folia-supported: true\n' : ''}`;
  }
  if (servers.some((s) => s === 'PaperMC' || s === 'Folia' || s === 'CanvasMC' || s === 'Purpur')) {
    files['paper-plugin.yml'] =
      `name: ${PLUGIN.name}\nversion: ${demo.version}\nmain: ${PLUGIN.main}\napi-version: '${api ?? '1.20'}'\nfolia-supported: true\n`;
  }
  return files;
}

function demoJar(demo: Demo, mainClass: Uint8Array): Uint8Array {
  return makePluginJar({
    manifest: {
      'Created-By': 'plugin depot demo',
      'Implementation-Title': PLUGIN.name,
      'Implementation-Version': demo.version,
      'Build-Jdk-Spec': demo.java === '8' ? '1.8' : demo.java,
    },
    files: {
      ...descriptors(demo),
      'README.txt': `${PLUGIN.name} ${demo.version} for ${demo.software.join(', ')} on Java ${demo.java}. Demo content of plugin depot.\n`,
    },
    binaries: { [DEMO_CLASS_ENTRY]: mainClass },
  });
}

function demoMinecraft(text: string) {
  const ranges = parseMinecraftList(text);
  if (typeof ranges === 'string') throw new Error(`demo minecraft ${text}: ${ranges}`);
  return ranges;
}

const { dataDir } = readConfig();
await rm(versionsDir(dataDir), { recursive: true, force: true });
await rm(jarsDir(dataDir), { recursive: true, force: true });
await mkdir(versionsDir(dataDir), { recursive: true });
await mkdir(jarsDir(dataDir), { recursive: true });
const classes = await compileDemoClasses(DEMO_VERSIONS.map((demo) => demo.java));
for (const demo of DEMO_VERSIONS) {
  const bytes = demoJar(demo, classes.get(demo.java)!);
  const sha256 = sha256Hex(bytes);
  // As a release stores them (issue 31), and refused as a release would be if a claim were false.
  const declared = checkDescriptors(bytes, demo.software, false);
  // What a release reads of the classes (issue 39): the class-file version, refused if below the claim.
  const { classFileVersion } = checkJava(bytes, demo.java, { jar: `demo ${demo.version}`, fix: 'compile' });
  const record = PluginVersionRecord.parse({
    id: `plugin-${Date.parse(demo.at)}-${demo.idSuffix}`,
    serverSoftware: demo.software,
    pluginVersion: demo.version,
    javaVersion: demo.java,
    ...minecraftFields(demo.minecraft === undefined ? undefined : demoMinecraft(demo.minecraft)),
    proxyVersion: demo.proxy ?? null,
    fileName: `DepotDemo-${demo.version}-${demo.software.map((s) => s.toLowerCase()).join('+')}-java${demo.java}.jar`,
    fileSize: bytes.length,
    sha256,
    createdAt: demo.at,
    updatedAt: demo.at,
    createdBy: demo.by,
    ...(demo.channel ? { channel: demo.channel } : {}),
    classFileVersion,
    ...declared,
  });
  await writeFile(jarPath(dataDir, record.id), bytes);
  if (demo.changelog) await writeFile(changelogPath(dataDir, record.id), demo.changelog);
  await writeFile(recordPath(dataDir, record.id), `${JSON.stringify(record, null, 2)}\n`);
}
await writeFile(join(dataDir, 'users.json'), `${JSON.stringify(DEMO_USERS, null, 2)}\n`);
const brandFiles = await writeDemoBrands(dataDir);
await writeDemoProject(dataDir);
console.log(
  `demo data: ${DEMO_VERSIONS.length} versions, ${DEMO_USERS.length} users, ${brandFiles} brand images in ${dataDir}`,
);
