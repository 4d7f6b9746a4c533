import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { describeIssues } from '../../server/describe-issues.ts';
import { jarPath, jarsDir, loadCatalog, sha256Hex, versionsDir } from '../../server/versions/catalog.ts';
import { inspectJar } from '../../server/versions/jar.ts';
import { JavaVersion, PluginVersionRecord, SemVer, ServerSoftwareName } from '../../server/versions/schema.ts';
import { runBuild } from '../build.ts';
import { writeFileAtomic } from '../../server/write-atomic.ts';

export class RefusedError extends Error {}

const ReleaseOptions = z.object({
  file: z.string({ error: 'missing the JAR file: depot release <file.jar> --version X.Y.Z --java 21 --software PaperMC' }),
  version: SemVer,
  java: JavaVersion,
  software: z
    .string({ error: 'missing --software, e.g. --software PaperMC,Folia' })
    .transform((list) => list.split(',').map((name) => name.trim()).filter(Boolean))
    .pipe(z.array(ServerSoftwareName).min(1)),
  minecraft: z.string().min(1).max(32).optional(),
  proxy: z.string().min(1).max(32).optional(),
  by: z.string().min(1).max(64).default('operator'),
});
export type ReleaseOptions = z.output<typeof ReleaseOptions>;

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
    },
  });
  const parsed = ReleaseOptions.safeParse({ ...values, file: positionals[0] });
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((issue) => {
      const option = String(issue.path[0] ?? '');
      return option === 'file' ? issue.message : `--${option}: ${issue.message}`;
    });
    throw new RefusedError(reasons.join('; '));
  }
  return parsed.data;
}

/**
 * Adds a JAR and its record to data/ and rebuilds. The JAR lands first and the record last, each
 * atomically: the record is the commit point, so a crash leaves at most an unreferenced JAR.
 */
export async function releaseJar(options: ReleaseOptions, dirs: { dataDir: string; distDir: string; buildCacheDir?: string; site?: boolean }, now: Date) {
  const bytes = await readFile(options.file).catch((error: NodeJS.ErrnoException) => {
    throw new RefusedError(`cannot read ${options.file}: ${error.code ?? error.message}`);
  });
  try {
    inspectJar(bytes);
  } catch (error) {
    throw new RefusedError(`${options.file} is ${(error as Error).message}`);
  }
  const sha256 = sha256Hex(bytes);
  const catalog = await loadCatalog(dirs.dataDir);
  const sameBytes = catalog.versions.find((v) => v.sha256 === sha256);
  if (sameBytes) throw new RefusedError(`${options.file} is already released as ${sameBytes.id} (same sha256)`);
  const sameRelease = catalog.versions.find(
    (v) =>
      v.pluginVersion === options.version &&
      v.javaVersion === options.java &&
      [...v.serverSoftware].sort().join() === [...options.software].sort().join(),
  );
  if (sameRelease) {
    throw new RefusedError(`version ${options.version} for Java ${options.java} and ${options.software.join(', ')} is already released as ${sameRelease.id}`);
  }
  const at = now.toISOString();
  const parsed = PluginVersionRecord.safeParse({
    id: `plugin-${now.getTime()}-${randomBytes(6).toString('hex')}`,
    serverSoftware: options.software,
    pluginVersion: options.version,
    javaVersion: options.java,
    ...(options.minecraft ? { minecraftVersion: options.minecraft } : {}),
    proxyVersion: options.proxy ?? null,
    fileName: basename(options.file),
    fileSize: bytes.length,
    sha256,
    createdAt: at,
    updatedAt: at,
    createdBy: options.by,
  });
  if (!parsed.success) throw new RefusedError(`cannot release ${options.file}: ${describeIssues(parsed.error.issues)}`);
  const record = parsed.data;
  await mkdir(jarsDir(dirs.dataDir), { recursive: true });
  await mkdir(versionsDir(dirs.dataDir), { recursive: true });
  await writeFileAtomic(jarPath(dirs.dataDir, record.id), bytes);
  await writeFileAtomic(join(versionsDir(dirs.dataDir), `${record.id}.json`), `${JSON.stringify(record, null, 2)}\n`);
  await runBuild({ ...dirs, cacheDir: dirs.buildCacheDir, log: (line) => console.error(line) });
  return record;
}
