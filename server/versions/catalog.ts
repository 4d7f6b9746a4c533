import { readFile, readdir, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { DataError, parseFile, readJsonFile } from '../data-files.ts';
import { sha256Hex } from '../digest.ts';
import { allOrFirstError } from '../settle.ts';
import { compareNewestFirst, indexLatest, type LatestIndex } from './latest.ts';
import {
  CHANGELOG_MAX_BYTES,
  ChangelogMarkdown,
  PluginVersionRecord,
  UserProfiles,
  type CatalogVersion,
  type UserProfile,
} from './schema.ts';

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
 * JARs already hashed, by the identity of their file (device, inode, size, modification and change
 * times): a JAR whose file did not change since it matched `sha256` need not be read again.
 */
export type VerifiedJars = {
  matches(path: string, file: Stats, sha256: string): boolean;
  add(path: string, file: Stats, sha256: string): void;
};

/**
 * Reads and validates data/: every record, its JAR (present, same size and sha256), its changelog
 * when there is one, and the users. Fails on the first bad file with a message naming the file and
 * the field. With `verified`, a JAR whose file is unchanged since it was last hashed is not read again.
 */
export async function loadCatalog(dataDir: string, verified?: VerifiedJars): Promise<Catalog> {
  const dir = versionsDir(dataDir);
  const files = (await readdir(dir).catch(() => [] as string[])).sort();
  const names = files.filter((n) => n.endsWith('.json'));
  const orphan = files.find((n) => n.endsWith('.md') && !files.includes(n.replace(/\.md$/, '.json')));
  if (orphan)
    throw new DataError(`${join(dir, orphan)}: a changelog without its record ${orphan.replace(/\.md$/, '.json')}`);
  // A few files at a time: one after the other, each read waits a round trip through libuv's threads.
  const limit = pLimit(16);
  const records = await allOrFirstError(
    names.map((name) =>
      limit(async (): Promise<CatalogVersion> => {
        const file = join(dir, name);
        const record = parseFile(PluginVersionRecord, await readJsonFile(file), file);
        if (`${record.id}.json` !== name)
          throw new DataError(`${file}: id: "${record.id}" does not match the file name`);
        await checkJar(jarPath(dataDir, record.id), record, file, verified);
        const changelog = files.includes(`${record.id}.md`)
          ? await readChangelog(changelogPath(dataDir, record.id))
          : undefined;
        return changelog === undefined ? record : { ...record, changelog };
      }),
    ),
  );
  return createCatalog(records, await loadUsers(dataDir));
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
  verified: VerifiedJars | undefined,
): Promise<void> {
  const missing = () => {
    throw new DataError(`${file}: id: no JAR at ${path}`);
  };
  const before = verified ? await stat(path).catch(missing) : undefined;
  if (before && before.size === record.fileSize && verified!.matches(path, before, record.sha256)) return;
  const bytes = await readFile(path).catch(missing);
  if (bytes.length !== record.fileSize) {
    throw new DataError(`${file}: fileSize: ${record.fileSize} but ${path} has ${bytes.length} bytes`);
  }
  if (sha256Hex(bytes) !== record.sha256) throw new DataError(`${file}: sha256: does not match ${path}`);
  // Remembered only if the file did not change while it was read.
  const after = verified ? await stat(path).catch(missing) : undefined;
  if (before && after && sameFile(before, after)) verified!.add(path, after, record.sha256);
}

const sameFile = (a: Stats, b: Stats) =>
  a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
