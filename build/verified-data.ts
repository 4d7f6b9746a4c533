import { mkdir, readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { sha256Hex } from '../server/helpers/digest.ts';
import type { DataFileMemory } from '../server/data-file-memory.ts';
import type { BrandFileValues } from '../server/brands/sources.ts';
import type { CatalogFileValues } from '../server/versions/catalog.ts';
import type { SourceFileValues } from './source-files.ts';
import { writeFileAtomic } from '../server/write-atomic.ts';

/**
 * Bump when what an entry means changes (PluginVersionRecord's rules included; 3: a JAR's entry
 * holds its sha256 and sha512; 4: brand sources; 5: the build's sources): a cache of another
 * format is dropped, and every file of data/ is read again.
 */
const FORMAT = 5;

/**
 * A file changed within this long before it was read may change again without its times moving
 * (timestamps are coarser than a write, as git's "racily clean" index entries): it is read again
 * next time.
 */
const SETTLED_MS = 2000;

/**
 * The cache's first line; the rest is the body, whose sha256 it holds. Every value of the body was
 * validated with its zod schema when it was read from data/; the digest proves the body is what a
 * build of this FORMAT wrote, whole. Checking each value with zod again would cost what the cache
 * saves: about 100 ms of CPU at 10,000 versions, even column by column.
 */
const Header = z.strictObject({ format: z.literal(FORMAT), sha256: z.string().regex(/^[0-9a-f]{64}$/) });

/** What a remembered file held, by kind: every loader's kinds (each names its own), kept in one cache. */
export type RememberedValues = CatalogFileValues & BrandFileValues & SourceFileValues;
export type RememberedKind = keyof RememberedValues;

/** Device, inode, size, modification and change times, then what the file held. */
type Entry<V> = [number, number, number, number, number, V];
/** Per kind, file name (in versions/ or jars/) -> entry. */
type Section = { [K in RememberedKind]: Record<string, Entry<RememberedValues[K]>> };
/** Per data/ folder (absolute path), its section. */
type Body = Record<string, Section>;

const KINDS = ['jars', 'records', 'changelogs', 'brands', 'sources'] as const satisfies readonly RememberedKind[];

/** The file in the build cache (dist/.cache) that remembers the files of data/ already read. */
export const VERIFIED_DATA = 'verified-data.json';

/**
 * The build's memory of the files of `dataDir` it read and validated (records, changelogs, and
 * JARs with their sha256, sha512 and class files; a JAR's entry of a build before issue 39 has no
 * class files, and its JAR is read once more), in the build cache: loading data/ reads only the files whose identity
 * changed since. A missing cache, an unreadable one or one of another format means every file is
 * read, as without it. Call `save` after a successful load.
 */
export async function openVerifiedData(file: string, dataDir: string, now: () => number = Date.now) {
  const body = readBody(await readFile(file, 'utf8').catch(() => null));
  const key = resolve(dataDir);
  const known: Section = { jars: {}, records: {}, changelogs: {}, brands: {}, sources: {}, ...body?.[key] };
  const seen: Section = { jars: {}, records: {}, changelogs: {}, brands: {}, sources: {} };
  let added = 0;
  const memory: DataFileMemory<RememberedValues> = {
    recall(kind, name, stats) {
      const entry: Entry<unknown> | undefined = known[kind][name];
      if (
        entry === undefined ||
        entry[0] !== stats.dev ||
        entry[1] !== stats.ino ||
        entry[2] !== stats.size ||
        entry[3] !== stats.mtimeMs ||
        entry[4] !== stats.ctimeMs
      )
        return undefined;
      (seen[kind] as Record<string, Entry<unknown>>)[name] = entry;
      return entry[5] as RememberedValues[typeof kind];
    },
    remember(kind, name, stats, value) {
      if (now() - Math.max(stats.mtimeMs, stats.ctimeMs) < SETTLED_MS) return;
      (seen[kind] as Record<string, Entry<unknown>>)[name] = [
        stats.dev,
        stats.ino,
        stats.size,
        stats.mtimeMs,
        stats.ctimeMs,
        value,
      ];
      added++;
    },
  };
  return {
    memory,
    /** Keeps what this load saw (other data/ folders sharing the cache keep theirs); writes only on a change. */
    async save() {
      const same = KINDS.every((kind) => Object.keys(seen[kind]).length === Object.keys(known[kind]).length);
      if (body && added === 0 && same) return;
      const text = JSON.stringify({ ...body, [key]: seen } satisfies Body);
      await mkdir(dirname(file), { recursive: true });
      await writeFileAtomic(file, `${JSON.stringify({ format: FORMAT, sha256: sha256Hex(text) })}\n${text}`);
    },
  };
}

/** The body of a cache file, or null when there is none or it is not whole and of this format. */
function readBody(text: string | null): Body | null {
  const newline = text?.indexOf('\n') ?? -1;
  if (text === null || newline < 0) return null;
  const header = Header.safeParse(safeJson(text.slice(0, newline)));
  const rest = text.slice(newline + 1);
  if (!header.success || sha256Hex(rest) !== header.data.sha256) return null;
  return safeJson(rest) as Body | null;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
