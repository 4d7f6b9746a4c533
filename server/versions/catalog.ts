import { readFile, readdir, stat } from 'node:fs/promises';
import { statSync, type Stats } from 'node:fs';
import { basename, join } from 'node:path';
import pLimit from 'p-limit';
import { DataError, parseFile, readJsonFile } from '../data-files.ts';
import { allOrFirstError } from '../helpers/settle.ts';
import type { DataFileMemory } from '../data-file-memory.ts';
import { catalogVersion, classFileVersionOf, readJarFacts, type JarFacts } from './catalog-version.ts';
import { compareNewestFirst, indexLatest, type LatestIndex } from './latest.ts';
import { CHANGELOG_MAX_BYTES, ChangelogMarkdown } from '../changelog-markdown.ts';
import { PluginVersionRecord, UserProfiles, type CatalogVersion, type UserProfile } from './schema.ts';

/** What loading the catalog remembers of data/'s files, by kind: a JAR's digests and class files, a record, a changelog's text. */
export type CatalogFileValues = { jars: JarFacts; records: PluginVersionRecord; changelogs: string };
type CatalogMemory = DataFileMemory<CatalogFileValues>;

export type Catalog = {
  /** Newest first (SPEC 2.4.2 order). */
  versions: readonly CatalogVersion[];
  byId: ReadonlyMap<string, CatalogVersion>;
  users: ReadonlyMap<string, UserProfile>;
  latest: LatestIndex;
};

export function createCatalog(records: readonly CatalogVersion[], users: readonly UserProfile[]): Catalog {
  const versions = [...records].sort(compareNewestFirst);
  return {
    versions,
    byId: new Map(versions.map((v) => [v.id, v])),
    users: new Map(users.map((u) => [u.username, u])),
    latest: indexLatest(versions),
  };
}

export const versionsDir = (dataDir: string) => join(dataDir, 'versions');
export const jarsDir = (dataDir: string) => join(dataDir, 'jars');
export const jarPath = (dataDir: string, id: string) => join(jarsDir(dataDir), `${id}.jar`);
/** A version's record. */
export const recordPath = (dataDir: string, id: string) => join(versionsDir(dataDir), `${id}.json`);
/** A version's changelog, Markdown, beside its record. */
export const changelogPath = (dataDir: string, id: string) => join(versionsDir(dataDir), `${id}.md`);

export async function loadUsers(dataDir: string): Promise<UserProfile[]> {
  const file = join(dataDir, 'users.json');
  const raw = await readJsonFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return parseFile(UserProfiles, raw, file);
}

/**
 * Reads and validates data/: every record, its JAR (present, same size and sha256; its sha512 is
 * computed in the same read and kept in the catalog), its changelog
 * when there is one, and the users. Fails on the first bad file with a message naming the file and
 * the field. With `memory`, a record, changelog or JAR whose file is unchanged since it was last
 * read is not read again.
 */
export async function loadCatalog(dataDir: string, memory?: CatalogMemory): Promise<Catalog> {
  const dir = versionsDir(dataDir);
  const sorted = (await readdir(dir).catch(() => [] as string[])).sort();
  const files = new Set(sorted);
  const names = sorted.filter((n) => n.endsWith('.json'));
  const orphan = sorted.find((n) => n.endsWith('.md') && !files.has(n.replace(/\.md$/, '.json')));
  if (orphan)
    throw new DataError(`${join(dir, orphan)}: a changelog without its record ${orphan.replace(/\.md$/, '.json')}`);
  // Unchanged versions in one synchronous pass: a stat takes microseconds, where a promise per
  // file waits a round trip through libuv's threads (10,000 versions: 20,000 of them).
  const recall = memory && recallVersion(dataDir, files, memory);
  const records = recall ? names.map(recall) : names.map(() => undefined);
  // The rest a few files at a time: one after the other, each read waits a round trip through libuv's threads.
  const limit = pLimit(16);
  const unknown = names.flatMap((name, index) => (records[index] ? [] : [index]));
  const read = await allOrFirstError(
    unknown.map((index) => limit(() => readVersion(dataDir, names[index]!, files, memory))),
  );
  unknown.forEach((index, i) => (records[index] = read[i]));
  return createCatalog(records as CatalogVersion[], await loadUsers(dataDir));
}

/** A version whose record, JAR and changelog files are all as remembered; undefined otherwise. */
function recallVersion(dataDir: string, files: ReadonlySet<string>, memory: CatalogMemory) {
  // Paths by concatenation: join() on every file costs more than the stat.
  const [versions, jars] = [versionsDir(dataDir), jarsDir(dataDir)];
  const recall = <K extends keyof CatalogFileValues>(kind: K, dir: string, name: string, size?: number) => {
    const file = statSync(`${dir}/${name}`, { throwIfNoEntry: false });
    return file && (size === undefined || file.size === size) ? memory.recall(kind, name, file) : undefined;
  };
  return (name: string): CatalogVersion | undefined => {
    const record = recall('records', versions, name);
    if (!record || `${record.id}.json` !== name) return undefined;
    const jar = recall('jars', jars, `${record.id}.jar`, record.fileSize);
    // A cache of before issue 39 has no class files: the JAR is read again, once.
    if (jar?.sha256 !== record.sha256 || jar.classes === undefined) return undefined;
    const proven = withClassFileVersion(record, jar, `${versions}/${name}`);
    if (!files.has(`${record.id}.md`)) return catalogVersion(proven, jar.sha512);
    const changelog = recall('changelogs', versions, `${record.id}.md`);
    return changelog === undefined ? undefined : catalogVersion(proven, jar.sha512, changelog);
  };
}

async function readVersion(
  dataDir: string,
  name: string,
  files: ReadonlySet<string>,
  memory: CatalogMemory | undefined,
): Promise<CatalogVersion> {
  const file = join(versionsDir(dataDir), name);
  const record = await readOnce(file, name, memory, 'records', async () =>
    parseFile(PluginVersionRecord, await readJsonFile(file), file),
  );
  if (`${record.id}.json` !== name) throw new DataError(`${file}: id: "${record.id}" does not match the file name`);
  const jar = await checkJar(jarPath(dataDir, record.id), record, file, memory);
  const proven = withClassFileVersion(record, jar, file);
  if (!files.has(`${record.id}.md`)) return catalogVersion(proven, jar.sha512);
  const markdown = changelogPath(dataDir, record.id);
  const changelog = await readOnce(markdown, `${record.id}.md`, memory, 'changelogs', () => readChangelog(markdown));
  return catalogVersion(proven, jar.sha512, changelog);
}

/**
 * Issue 39: the record with the classFileVersion its JAR's bytes prove: a record of before issue 39
 * gains it, one that has it must say what the bytes say.
 */
function withClassFileVersion(record: PluginVersionRecord, jar: JarFacts, file: string): PluginVersionRecord {
  const classFileVersion = classFileVersionOf(jar.classes);
  if (record.classFileVersion === classFileVersion) return record;
  if (record.classFileVersion !== undefined)
    throw new DataError(
      `${file}: classFileVersion: ${record.classFileVersion}, but the JAR's classes say ${classFileVersion ?? 'nothing (it holds none that loads)'}`,
    );
  return { ...record, classFileVersion };
}

/**
 * The value of a file as remembered when its file is unchanged, else as `read` finds it, then
 * remembered if the file did not change while it was read.
 */
async function readOnce<K extends 'records' | 'changelogs'>(
  path: string,
  name: string,
  memory: CatalogMemory | undefined,
  kind: K,
  read: () => Promise<CatalogFileValues[K]>,
): Promise<CatalogFileValues[K]> {
  const before = memory ? await stat(path).catch(() => undefined) : undefined;
  const known = before && memory!.recall(kind, name, before);
  if (known !== undefined) return known;
  const value = await read();
  const after = before && (await stat(path).catch(() => undefined));
  if (before && after && sameFile(before, after)) memory!.remember(kind, name, after, value);
  return value;
}

/**
 * A changelog file: at most CHANGELOG_MAX_BYTES of valid UTF-8 that is not blank. The same check
 * for data/ and for `depot release --changelog`.
 */
export async function readChangelog(file: string): Promise<string> {
  const { size } = await stat(file);
  if (size > CHANGELOG_MAX_BYTES)
    throw new DataError(`${file}: ${size} bytes; a changelog holds at most ${CHANGELOG_MAX_BYTES} bytes`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await readFile(file));
  } catch {
    throw new DataError(`${file}: not valid UTF-8`);
  }
  return parseFile(ChangelogMarkdown, text, file);
}

async function checkJar(
  path: string,
  record: PluginVersionRecord,
  file: string,
  memory: CatalogMemory | undefined,
): Promise<JarFacts> {
  const missing = () => {
    throw new DataError(`${file}: id: no JAR at ${path}`);
  };
  const before = memory ? await stat(path).catch(missing) : undefined;
  const known = before && before.size === record.fileSize ? memory!.recall('jars', basename(path), before) : undefined;
  if (known?.sha256 === record.sha256 && known.classes !== undefined) return known;
  const bytes = await readFile(path).catch(missing);
  if (bytes.length !== record.fileSize) {
    throw new DataError(`${file}: fileSize: ${record.fileSize} but ${path} has ${bytes.length} bytes`);
  }
  // Both digests in the one read: sha512 is what Repr-Digest and the .sha512 sidecar serve; and
  // what its class files need (issue 39), read once and remembered with them.
  const facts = readJarFacts(bytes);
  if (facts.sha256 !== record.sha256) throw new DataError(`${file}: sha256: does not match ${path}`);
  // Remembered only if the file did not change while it was read.
  const after = memory ? await stat(path).catch(missing) : undefined;
  if (before && after && sameFile(before, after)) memory!.remember('jars', basename(path), after, facts);
  return facts;
}

const sameFile = (a: Stats, b: Stats) =>
  a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
