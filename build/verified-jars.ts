import type { Stats } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import type { VerifiedJars } from '../server/versions/catalog.ts';
import { writeFileAtomic } from '../server/write-atomic.ts';

/** Bump when what an entry means changes: entries of another format are dropped (every JAR is hashed again). */
const FORMAT = 1;

/**
 * A file changed within this long before it was hashed may change again without its times moving
 * (timestamps are coarser than a write, as git's "racily clean" index entries): it is hashed again
 * next time.
 */
const SETTLED_MS = 2000;

const FileIdentity = z.strictObject({
  dev: z.number(),
  ino: z.number(),
  size: z.number(),
  mtimeMs: z.number(),
  ctimeMs: z.number(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
type FileIdentity = z.infer<typeof FileIdentity>;

const VerifiedJarsFile = z.strictObject({ format: z.literal(FORMAT), jars: z.record(z.string(), FileIdentity) });

/** The file in the build cache (dist/.cache) that remembers which JARs were hashed. */
export const VERIFIED_JARS = 'verified-jars.json';

/**
 * The build's memory of JARs it hashed, in the build cache (one JSON file keyed by absolute path):
 * loading data/ reads and hashes only the JARs whose files changed since. A missing or unreadable
 * cache means every JAR is hashed, as without it. Call `save` after a successful load.
 */
export async function openVerifiedJars(file: string, now: () => number = Date.now) {
  const text = await readFile(file, 'utf8').catch(() => null);
  const parsed = text === null ? null : VerifiedJarsFile.safeParse(safeJson(text));
  const known = new Map<string, FileIdentity>(parsed?.success ? Object.entries(parsed.data.jars) : []);
  const seen = new Map<string, FileIdentity>();
  const identity = (file: Stats, sha256: string): FileIdentity => ({
    dev: file.dev,
    ino: file.ino,
    size: file.size,
    mtimeMs: file.mtimeMs,
    ctimeMs: file.ctimeMs,
    sha256,
  });
  const jars: VerifiedJars = {
    matches(path, file, sha256) {
      const entry = known.get(resolve(path));
      const current = identity(file, sha256);
      const same =
        entry !== undefined && (Object.keys(current) as (keyof FileIdentity)[]).every((k) => entry[k] === current[k]);
      if (same) seen.set(resolve(path), entry);
      return same;
    },
    add(path, file, sha256) {
      if (now() - Math.max(file.mtimeMs, file.ctimeMs) >= SETTLED_MS) seen.set(resolve(path), identity(file, sha256));
    },
  };
  return {
    jars,
    /** Keeps what this load saw (JARs of other data/ folders sharing the cache stay too). */
    async save() {
      const jarsDirs = new Set([...seen.keys()].map((path) => dirname(path)));
      const kept = [...known].filter(([path]) => !jarsDirs.has(dirname(path)));
      const contents: z.infer<typeof VerifiedJarsFile> = {
        format: FORMAT,
        jars: Object.fromEntries([...kept, ...seen].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      };
      await mkdir(dirname(file), { recursive: true });
      await writeFileAtomic(file, JSON.stringify(contents));
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
