import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { describeIssues } from '../../server/describe-issues.ts';
import { DataError } from '../../server/data-files.ts';
import {
  changelogPath,
  createCatalog,
  jarPath,
  jarsDir,
  readChangelog,
  versionsDir,
  type Catalog,
} from '../../server/versions/catalog.ts';
import { catalogVersion, jarDigests } from '../../server/versions/catalog-version.ts';
import { inspectJar } from '../../server/versions/jar.ts';
import { Channel, JavaVersion, PluginVersionRecord, SemVer, ServerSoftwareName } from '../../server/versions/schema.ts';
import { runBuild } from '../build.ts';
import { writeFileAtomic } from '../../server/write-atomic.ts';
import { Actor } from '../../server/audit/schema.ts';
import { actorOf, auditChange } from './audit.ts';
import { RefusedError } from './refused.ts';
import { enqueueWebhooks } from './announce.ts';
import { presentVersion } from '../../server/versions/present.ts';
import { highestMinecraft, parseMinecraftList, type MinecraftRange } from '../../server/versions/minecraft.ts';
import { acceptChangelog } from '../../server/versions/changelog.ts';
import {
  describeCharacter,
  escapeForbidden,
  forbiddenCharacter,
  freeTextProblem,
  refuseForbiddenText,
} from '../../server/free-text.ts';

/** `--minecraft`, issue 15: `1.21.4`, `1.20.6-1.21.4`, `1.21.x` or a comma list of them. */
export const MinecraftOption = z
  .string()
  .max(400, { error: 'is longer than 400 characters' })
  .transform((text, ctx): MinecraftRange[] | string => {
    // A snapshot or pre-release name (24w14a, 1.21.5-pre1) is kept as written, as before ranges: it matches only itself.
    if (!/^[\d.x,\s-]+$/.test(text)) {
      const problem = freeTextProblem(text, { cdata: false });
      if (problem) {
        ctx.addIssue({ code: 'custom', message: problem });
        return z.NEVER;
      }
      if (text.length <= 32) return text;
      ctx.addIssue({ code: 'custom', message: 'must be a version, a range or a list of them such as 1.20.6-1.21.4' });
      return z.NEVER;
    }
    const ranges = parseMinecraftList(text);
    if (typeof ranges === 'string') {
      ctx.addIssue({ code: 'custom', message: ranges });
      return z.NEVER;
    }
    return ranges;
  });

/** `--proxy`: the proxy version a build is for. */
export const ProxyOption = z
  .string()
  .min(1)
  .max(32)
  .superRefine(refuseForbiddenText({ cdata: false }));

const ReleaseOptions = z.object({
  file: z.string({
    error: 'missing the JAR file: depot release <file.jar> --version X.Y.Z --java 21 --software PaperMC',
  }),
  version: SemVer,
  java: JavaVersion,
  software: z
    .string({ error: 'missing --software, e.g. --software PaperMC,Folia' })
    .transform((list) =>
      list
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    )
    .pipe(z.array(ServerSoftwareName).min(1)),
  minecraft: MinecraftOption.optional(),
  proxy: ProxyOption.optional(),
  /** createdBy (`operator` when absent) and the audit log's actor (the OS user when absent). */
  by: Actor.optional(),
  /** A Markdown file, stored as data/versions/<id>.md. */
  changelog: z.string().min(1).optional(),
  /** Absent: a release. */
  channel: Channel.optional(),
});
export type ReleaseOptions = z.output<typeof ReleaseOptions>;

/**
 * A path as a refusal shows it: quoted with its control and format characters escaped, so it stays
 * one harmless line that reads as written.
 */
export function shownPath(path: string): string {
  if (forbiddenCharacter(path) === undefined) return path;
  return `"${escapeForbidden(path.replace(/["\\]/g, '\\$&'))}"`;
}

export function parseReleaseArgs(args: string[]): ReleaseOptions {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      version: { type: 'string' },
      java: { type: 'string' },
      software: { type: 'string' },
      minecraft: { type: 'string' },
      proxy: { type: 'string' },
      by: { type: 'string' },
      changelog: { type: 'string' },
      channel: { type: 'string' },
    },
  });
  const parsed = ReleaseOptions.safeParse({ ...values, file: positionals[0] });
  if (!parsed.success) throw optionsRefused(parsed.error.issues, 'file');
  return parsed.data;
}

/** A command's options refused: each issue as `--<option>: <message>`, the positional's as its message alone. */
export function optionsRefused(issues: readonly z.core.$ZodIssue[], positional: string): RefusedError {
  const reasons = issues.map((issue) => {
    const option = String(issue.path[0] ?? '');
    return option === positional ? issue.message : `--${option}: ${issue.message}`;
  });
  return new RefusedError(reasons.join('; '));
}

/**
 * `--changelog <file>`: checked as the build checks data/versions/<id>.md, then rendered once within
 * the render limits (acceptChangelog), all before anything is written.
 */
export async function readChangelogOption(file: string): Promise<string> {
  const markdown = await readChangelog(file).catch((error: NodeJS.ErrnoException) => {
    if (error instanceof DataError) throw new RefusedError(`--changelog: ${escapeForbidden(error.message)}`);
    throw new RefusedError(`--changelog: cannot read ${shownPath(file)}: ${error.code ?? error.message}`);
  });
  const problem = acceptChangelog(markdown, cpuMilliseconds);
  if (problem) throw new RefusedError(`--changelog: ${shownPath(file)}: ${problem}`);
  return markdown;
}

/** This process's CPU time: a render's cost, whatever else the machine runs meanwhile. */
function cpuMilliseconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Adds a JAR, its changelog and its record to data/ and rebuilds. The JAR and the changelog land
 * first and the record last, each atomically: the record is the commit point, so a crash leaves at
 * most files no record names (the build refuses a changelog without its record: remove it).
 */
export async function releaseJar(
  options: ReleaseOptions,
  dirs: {
    dataDir: string;
    distDir: string;
    buildCacheDir?: string;
    site?: boolean;
    storageDir?: string;
    redisUrl?: string | undefined;
  },
  now: Date,
) {
  const file = shownPath(options.file);
  // The name is served in Content-Disposition, feeds, pages and nginx.conf, and written to logs:
  // refuse it (the character rule) before reading anything.
  const name = basename(options.file);
  const forbidden = forbiddenCharacter(name);
  if (forbidden !== undefined || name.includes(']]>')) {
    const what = forbidden === undefined ? '"]]>"' : describeCharacter(forbidden);
    throw new RefusedError(`the JAR's file name ${shownPath(name)} contains ${what}; rename the file`);
  }
  const bytes = await readFile(options.file).catch((error: NodeJS.ErrnoException) => {
    throw new RefusedError(`cannot read ${file}: ${error.code ?? error.message}`);
  });
  try {
    inspectJar(bytes);
  } catch (error) {
    throw new RefusedError(`${file} is ${(error as Error).message}`);
  }
  const changelog = options.changelog === undefined ? undefined : await readChangelogOption(options.changelog);
  const { sha256, sha512 } = jarDigests(bytes);
  let released: { record: PluginVersionRecord; told: number } | undefined;
  // Checked and written under the build lock, against data/ as the build loads it: two releases of
  // the same JAR at once cannot both pass the duplicate check, and data/ is read once.
  const change = async (catalog: Catalog): Promise<Catalog> => {
    const record = newRecord(options, catalog, { file, bytes, sha256, now });
    // As loadCatalog makes it (sha512 included): the tree's catalog.json and its answers carry it.
    const next = createCatalog(
      [...catalog.versions, catalogVersion(record, sha512, changelog)],
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
      await writeFileAtomic(jarPath(dirs.dataDir, record.id), bytes);
      if (changelog !== undefined) await writeFileAtomic(changelogPath(dirs.dataDir, record.id), changelog);
      await writeFileAtomic(
        join(versionsDir(dirs.dataDir), `${record.id}.json`),
        `${JSON.stringify(record, null, 2)}\n`,
      );
    } catch (error) {
      await announced.cancel();
      throw error;
    }
    released = { record, told: announced.told };
    return next;
  };
  await runBuild({ ...dirs, cacheDir: dirs.buildCacheDir, change, log: (line) => console.error(line) });
  const { record, told } = released!;
  if (told > 0)
    console.error(
      `[webhooks] ${told} deliveries written to the outbox, sent by the origins once they serve ${record.id}`,
    );
  if (dirs.storageDir) {
    const { id, createdAt: _createdAt, updatedAt: _updatedAt, ...changes } = record;
    const state = { storageDir: dirs.storageDir, redisUrl: dirs.redisUrl };
    await auditChange(state, { action: 'release', target: id, actor: actorOf(options.by), changes });
  }
  return record;
}

/** The record of a release, refused when data/ already has the same bytes or the same version, Java and softwares. */
function newRecord(
  options: ReleaseOptions,
  catalog: Catalog,
  jar: { file: string; bytes: Uint8Array; sha256: string; now: Date },
): PluginVersionRecord {
  const { file, bytes, sha256, now } = jar;
  const sameBytes = catalog.versions.find((v) => v.sha256 === sha256);
  if (sameBytes) throw new RefusedError(`${file} is already released as ${sameBytes.id} (same sha256)`);
  const sameRelease = catalog.versions.find(
    (v) =>
      v.pluginVersion === options.version &&
      v.javaVersion === options.java &&
      [...v.serverSoftware].sort().join() === [...options.software].sort().join(),
  );
  if (sameRelease) {
    throw new RefusedError(
      `version ${options.version} for Java ${options.java} and ${options.software.join(', ')} is already released as ${sameRelease.id}`,
    );
  }
  const at = now.toISOString();
  const parsed = PluginVersionRecord.safeParse({
    id: `plugin-${now.getTime()}-${randomBytes(6).toString('hex')}`,
    serverSoftware: options.software,
    pluginVersion: options.version,
    javaVersion: options.java,
    ...minecraftFields(options.minecraft),
    proxyVersion: options.proxy ?? null,
    fileName: basename(options.file),
    fileSize: bytes.length,
    sha256,
    createdAt: at,
    updatedAt: at,
    createdBy: options.by ?? 'operator',
    channel: options.channel ?? 'release',
  });
  if (!parsed.success) throw new RefusedError(`cannot release ${file}: ${describeIssues(parsed.error.issues)}`);
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
