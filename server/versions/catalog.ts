import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DataError, parseFile, readJsonFile } from '../data-files.ts';
import { sha256Hex } from '../digest.ts';
import { compareNewestFirst, indexLatest, type LatestIndex } from './latest.ts';
import { PluginVersionRecord, UserProfiles, type UserProfile } from './schema.ts';

export type Catalog = {
  /** Newest first (SPEC 2.4.2 order). */
  versions: readonly PluginVersionRecord[];
  byId: ReadonlyMap<string, PluginVersionRecord>;
  users: ReadonlyMap<string, UserProfile>;
  latest: LatestIndex;
};

export function createCatalog(records: readonly PluginVersionRecord[], users: readonly UserProfile[]): Catalog {
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

export async function loadUsers(dataDir: string): Promise<UserProfile[]> {
  const file = join(dataDir, 'users.json');
  const raw = await readJsonFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return parseFile(UserProfiles, raw, file);
}

/**
 * Reads and validates data/: every record, its JAR (present, same size and sha256) and the users.
 * Fails on the first bad file with a message naming the file and the field.
 */
export async function loadCatalog(dataDir: string): Promise<Catalog> {
  const dir = versionsDir(dataDir);
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
  const records: PluginVersionRecord[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const record = parseFile(PluginVersionRecord, await readJsonFile(file), file);
    if (`${record.id}.json` !== name) throw new DataError(`${file}: id: "${record.id}" does not match the file name`);
    await checkJar(jarPath(dataDir, record.id), record, file);
    records.push(record);
  }
  return createCatalog(records, await loadUsers(dataDir));
}

async function checkJar(path: string, record: PluginVersionRecord, file: string): Promise<void> {
  const bytes = await readFile(path).catch(() => {
    throw new DataError(`${file}: id: no JAR at ${path}`);
  });
  if (bytes.length !== record.fileSize) {
    throw new DataError(`${file}: fileSize: ${record.fileSize} but ${path} has ${bytes.length} bytes`);
  }
  if (sha256Hex(bytes) !== record.sha256) throw new DataError(`${file}: sha256: does not match ${path}`);
}
