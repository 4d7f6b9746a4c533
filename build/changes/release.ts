import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir } from 'node:fs/promises';
import { basename } from 'node:path';
import { describeIssues } from '../../server/helpers/describe-issues.ts';
import { DataError, readJsonFile } from '../../server/data-files.ts';
import {
  createCatalog,
  jarsDir,
  readChangelog,
  recordPath,
  versionsDir,
  type Catalog,
} from '../../server/versions/catalog.ts';
import { catalogVersion, jarDigests, type JarDigests } from '../../server/versions/catalog-version.ts';
import { inspectJar } from '../../server/versions/jar.ts';
import { PluginVersionRecord } from '../../server/versions/schema.ts';
import { CHANGELOG_MAX_BYTES, ChangelogMarkdown, acceptChangelog } from '../../server/changelog-markdown.ts';
import { runBuild } from '../build.ts';
import { commitVersionChange } from '../version-commit.ts';
import { actorOf, auditChange, auditedScopes } from './audit.ts';
import { RefusedError } from './refused.ts';
import { checkDescriptors, overrideWarnings, type DescriptorFields } from './descriptors.ts';
import { checkJava } from './java.ts';
import { enqueueWebhooks } from './announce.ts';
import { presentVersion } from '../../server/versions/present.ts';
import { highestMinecraft, type MinecraftRange } from '../../server/versions/minecraft.ts';
import { describeCharacter, escapeForbidden, forbiddenCharacter, shownLine } from '../../server/free-text.ts';
import type { ReleaseRequest } from '../../server/publish/change-requests.ts';
import { ON_STDERR, type Progress } from './progress.ts';

/**
 * `--changelog <file>`: checked as the build checks data/versions/<id>.md, then rendered once within
 * the render limits (acceptChangelog), all before anything is written.
 */
export async function readChangelogOption(file: string): Promise<string> {
  const markdown = await readChangelog(file).catch((error: NodeJS.ErrnoException) => {
    if (error instanceof DataError) throw new RefusedError(`--changelog: ${escapeForbidden(error.message)}`, CHANGELOG);
    throw new RefusedError(`--changelog: cannot read ${shownLine(file)}: ${error.code ?? error.message}`, CHANGELOG);
  });
  const problem = acceptChangelog(markdown, cpuMilliseconds);
  if (problem) throw new RefusedError(`--changelog: ${shownLine(file)}: ${problem}`, CHANGELOG);
  return markdown;
}

const CHANGELOG = { kind: 'field', field: 'changelog' } as const;

/**
 * The API's `changelog`: what a --changelog file is checked for (readChangelog, then
 * acceptChangelog), on the text itself.
 */
export function acceptChangelogText(markdown: string): string {
  const refuse = (problem: string) => new RefusedError(`changelog: ${escapeForbidden(problem)}`, CHANGELOG);
  // A JSON string can hold a lone surrogate, which no UTF-8 file can.
  if (Buffer.from(markdown, 'utf8').toString('utf8') !== markdown) throw refuse('not valid UTF-8');
  const size = Buffer.byteLength(markdown);
  if (size > CHANGELOG_MAX_BYTES) throw refuse(`${size} bytes; a changelog holds at most ${CHANGELOG_MAX_BYTES} bytes`);
  const parsed = ChangelogMarkdown.safeParse(markdown);
  if (!parsed.success) throw refuse(parsed.error.issues.map((issue) => issue.message).join('; '));
  const problem = acceptChangelog(markdown, cpuMilliseconds);
  if (problem) throw refuse(problem);
  return markdown;
}

/** A request's changelog, checked and rendered once: read from its file (the CLI's) or as given (the API's). */
export function readRequestedChangelog(
  changelog: ReleaseRequest['changelog'],
): Promise<string | undefined> | string | undefined {
  if (changelog === undefined) return undefined;
  return typeof changelog === 'string' ? readChangelogOption(changelog) : acceptChangelogText(changelog.markdown);
}

/** This process's CPU time: a render's cost, whatever else the machine runs meanwhile. */
function cpuMilliseconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Adds a JAR, its changelog and its record to data/ and rebuilds. The record is the commit point
 * (commitVersionChange): a kill leaves data/ as it was or with the version whole.
 */
export async function releaseJar(
  options: ReleaseRequest,
  dirs: {
    dataDir: string;
    distDir: string;
    buildCacheDir?: string;
    site?: boolean;
    storageDir?: string;
    redisUrl?: string | undefined;
  },
  now: Date,
  progress: Progress = ON_STDERR,
) {
  const jar = await readReleaseJar(options.file, options.fileName);
  const java = checkJava(jar.bytes, options.java, { jar: jar.shown, fix: 'compile', metadata: options.metadata });
  const declared = checkDescriptors(jar.bytes, options.software, options.noDescriptorCheck === true);
  // Progress lines: the CLI's stderr, or the publishing origin's log (build/changes/worker.ts).
  for (const line of overrideWarnings(declared)) progress.log(line);
  const changelog = await readRequestedChangelog(options.changelog);
  let released: { record: PluginVersionRecord; told: number } | undefined;
  let refusedOnceServed: RefusedError | undefined;
  // Checked and written under the build lock, against data/ as the build loads it: two releases of
  // the same JAR at once cannot both pass the duplicate check, and data/ is read once.
  const change = async (catalog: Catalog): Promise<Catalog> => {
    // The served catalog, and what data/ holds beyond it (committed, then its build failed: a full disk).
    const unserved = await unservedRecords(dirs.dataDir, catalog);
    let record: PluginVersionRecord;
    try {
      record = newRecord({ ...options, ...java }, [...catalog.versions, ...unserved], jar, now, declared);
    } catch (error) {
      const refusal = error instanceof RefusedError ? error.refusal : undefined;
      if (refusal?.kind !== 'duplicate' || !unserved.some((v) => v.id === refusal.existingId)) throw error;
      // A retry of a release committed but never served: this build serves it (from data/), then
      // the retry is refused naming it, so the id it is told is one it can fetch.
      refusedOnceServed = error as RefusedError;
      return catalog;
    }
    // As loadCatalog makes it (sha512 included): the tree's catalog.json and its answers carry it.
    const next = createCatalog(
      [...catalog.versions, catalogVersion(record, jar.sha512, changelog)],
      [...catalog.users.values()],
    );
    // Announcements first: sent once the version is served, they are never lost to a crash after its record.
    const announced = dirs.storageDir
      ? await enqueueWebhooks(
          { storageDir: dirs.storageDir, redisUrl: dirs.redisUrl },
          { event: 'release', version: presentVersion(next, next.byId.get(record.id)!, true) },
          now.getTime(),
        )
      : { told: 0, cancel: async () => {} };
    try {
      await mkdir(jarsDir(dirs.dataDir), { recursive: true });
      await mkdir(versionsDir(dirs.dataDir), { recursive: true });
      const recordText = `${JSON.stringify(record, null, 2)}\n`;
      await commitVersionChange(dirs.dataDir, { id: record.id, recordText, jar: jar.bytes, changelog });
    } catch (error) {
      await announced.cancel();
      throw error;
    }
    // Audited with the commit, before any answer: a release answered 2xx is in the audit log.
    if (dirs.storageDir) {
      const { id, createdAt: _createdAt, updatedAt: _updatedAt, ...fields } = record;
      const changes = { ...fields, ...auditedScopes(options) };
      const state = { storageDir: dirs.storageDir, redisUrl: dirs.redisUrl };
      await auditChange(state, {
        action: 'release',
        target: id,
        actor: actorOf(options.by),
        tokenId: options.tokenId,
        changes,
      });
    }
    released = { record, told: announced.told };
    progress.written({ id: record.id });
    return next;
  };
  await runBuild({ ...dirs, cacheDir: dirs.buildCacheDir, change, log: progress.log });
  if (refusedOnceServed) throw refusedOnceServed;
  const { record, told } = released!;
  if (told > 0)
    progress.log(
      `[webhooks] ${told} deliveries written to the outbox, sent by the origins once they serve ${record.id}`,
    );
  return record;
}

type ReleaseJar = { shown: string; name: string; bytes: Uint8Array } & JarDigests;

/**
 * The JAR of a release, read and checked before anything is written: its name (the character
 * rule), its bytes (a plugin JAR) and their digests. `shown` names it in refusals: an upload's
 * temporary path means nothing to its sender, its file name does.
 */
async function readReleaseJar(path: string, fileName?: string): Promise<ReleaseJar> {
  const shown = shownLine(fileName ?? path);
  // The name is served in Content-Disposition, feeds, pages and nginx.conf, and written to logs:
  // refuse it (the character rule) before reading anything.
  const name = fileName ?? basename(path);
  const forbidden = forbiddenCharacter(name);
  if (forbidden !== undefined || name.includes(']]>')) {
    const what = forbidden === undefined ? '"]]>"' : describeCharacter(forbidden);
    throw new RefusedError(`the JAR's file name ${shownLine(name)} contains ${what}; rename the file`, {
      kind: 'field',
      field: 'fileName',
    });
  }
  const bytes = await readFile(path).catch((error: NodeJS.ErrnoException) => {
    throw new RefusedError(`cannot read ${shown}: ${error.code ?? error.message}`);
  });
  try {
    inspectJar(bytes);
  } catch (error) {
    throw new RefusedError(`${shown} is ${(error as Error).message}`, { kind: 'not-a-jar' });
  }
  return { shown, name, bytes, ...jarDigests(bytes) };
}

/**
 * The records in data/versions that `catalog` lacks: found by listing the folder, read one by one
 * (a few at most). One that does not parse is left to the build, which refuses it by name.
 */
async function unservedRecords(dataDir: string, catalog: Catalog): Promise<PluginVersionRecord[]> {
  const names = await readdir(versionsDir(dataDir)).catch(() => [] as string[]);
  const ids = names.filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -'.json'.length));
  const records = await Promise.all(
    ids
      .filter((id) => !catalog.byId.has(id))
      .map((id) =>
        readJsonFile(recordPath(dataDir, id)).then(
          (raw) => PluginVersionRecord.safeParse(raw).data,
          () => undefined,
        ),
      ),
  );
  return records.filter((record) => record !== undefined);
}

/** The record of a release, refused when data/ already has the same bytes or the same version, Java and softwares. */
function newRecord(
  options: ReleaseRequest & { java: NonNullable<ReleaseRequest['java']>; classFileVersion?: number },
  known: readonly PluginVersionRecord[],
  jar: ReleaseJar,
  now: Date,
  declared: DescriptorFields,
): PluginVersionRecord {
  const { shown, bytes, sha256 } = jar;
  const sameBytes = known.find((v) => v.sha256 === sha256);
  if (sameBytes)
    throw new RefusedError(`${shown} is already released as ${sameBytes.id} (same sha256)`, {
      kind: 'duplicate',
      existingId: sameBytes.id,
    });
  const sameRelease = known.find(
    (v) =>
      v.pluginVersion === options.version &&
      v.javaVersion === options.java &&
      [...v.serverSoftware].sort().join() === [...options.software].sort().join(),
  );
  if (sameRelease) {
    throw new RefusedError(
      `version ${options.version} for Java ${options.java} and ${options.software.join(', ')} is already released as ${sameRelease.id}`,
      { kind: 'duplicate', existingId: sameRelease.id },
    );
  }
  const at = now.toISOString();
  const parsed = PluginVersionRecord.safeParse({
    id: `plugin-${now.getTime()}-${randomBytes(6).toString('hex')}`,
    serverSoftware: options.software,
    pluginVersion: options.version,
    javaVersion: options.java,
    ...(options.classFileVersion === undefined ? {} : { classFileVersion: options.classFileVersion }),
    ...minecraftFields(options.minecraft),
    proxyVersion: options.proxy ?? null,
    fileName: jar.name,
    fileSize: bytes.length,
    sha256,
    createdAt: at,
    updatedAt: at,
    createdBy: options.by ?? 'operator',
    channel: options.channel ?? 'release',
    ...declared,
  });
  if (!parsed.success)
    throw new RefusedError(`cannot release ${shown}: ${describeIssues(parsed.error.issues)}`, {
      kind: 'field',
      field: String(parsed.error.issues[0]!.path[0] ?? 'fileName'),
    });
  return parsed.data;
}

/**
 * Issue 15: one version stays SPEC's `minecraftVersion` alone, as before; a range or list adds
 * `minecraftVersions`, and `minecraftVersion` holds its highest version for clients reading only SPEC's field.
 */
export function minecraftFields(ranges: MinecraftRange[] | string | undefined) {
  if (ranges === undefined) return {};
  if (typeof ranges === 'string') return { minecraftVersion: ranges };
  const [only] = ranges;
  if (ranges.length === 1 && only!.from === only!.to) return { minecraftVersion: only!.from };
  return { minecraftVersion: highestMinecraft(ranges), minecraftVersions: ranges };
}
