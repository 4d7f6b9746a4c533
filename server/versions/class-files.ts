import { shownLine } from '../free-text.ts';
import { inflateHead } from './inflate-head.ts';
import { checkZipDirectory, type ZipEntry } from './jar.ts';
import { JAVA, JAVA_VERSIONS, javaOfClassFile, listedJavaFor, runsOnJava, type JavaVersion } from './java.ts';

// Issue 39, item 2: the Java a JAR needs, read from its class files' headers (JVMS 4.1: magic
// 0xCAFEBABE, minor, major). Pure: bytes in, a result out. Bounded: only the entries
// checkZipDirectory found inside the file, and of each at most its first 8 bytes inflated.

/** What a JAR's class files say; plain data, kept in the build cache beside the JAR's digests. */
export type ClassFiles =
  /** No class outside the multi-release overlays and module-info.class: the bytes do not say. */
  | { kind: 'none' }
  /**
   * `major`: the highest class-file major version, first held by `entry`; `preview`: the first class
   * compiled with --enable-preview (minor 0xFFFF), with its major version.
   */
  | { kind: 'classes'; count: number; entry: string; major: number; preview?: { entry: string; major: number } }
  /** An entry named `.class` whose header cannot be read; `problem` says why, after its name. */
  | { kind: 'unreadable'; entry: string; problem: string };

const HEADER_BYTES = 8;
const MAGIC = 0xcafebabe;
const PREVIEW_MINOR = 0xffff;
/** JVMS 4.1: Java 1.0.2 wrote 45; no Java reads a lower one. */
const OLDEST_CLASS_FILE = 45;
/** JAR spec, multi-release: META-INF/versions/<n>/ is read only by Java n and later. */
const OVERLAY = /^META-INF\/versions\/\d+\//;

/** A JAR's class files, or the first `.class` entry that is no class file. A JAR that is no sound zip is `unreadable` too. */
export function readClassFiles(jar: Uint8Array): ClassFiles {
  let entries: ZipEntry[];
  try {
    entries = checkZipDirectory(jar);
  } catch (error) {
    return { kind: 'unreadable', entry: 'the JAR', problem: `is not a sound zip (${(error as Error).message})` };
  }
  let highest: { entry: string; major: number } | undefined;
  let preview: { entry: string; major: number } | undefined;
  let count = 0;
  for (const entry of entries) {
    if (!isCountedClass(entry.name)) continue;
    const header = readHeader(jar, entry);
    if (typeof header === 'string') return { kind: 'unreadable', entry: entry.name, problem: header };
    count++;
    if (!highest || header.major > highest.major) highest = { entry: entry.name, major: header.major };
    if (!preview && header.minor === PREVIEW_MINOR) preview = { entry: entry.name, major: header.major };
  }
  if (!highest) return { kind: 'none' };
  return { kind: 'classes', count, ...highest, ...(preview ? { preview } : {}) };
}

/** A class entry that counts: not an overlay, which older Javas never load, nor module-info.class, which Java 8 never loads. */
function isCountedClass(name: string): boolean {
  if (!name.endsWith('.class') || OVERLAY.test(name)) return false;
  return name !== 'module-info.class' && !name.endsWith('/module-info.class');
}

/** An entry's minor and major version, or why it has none. */
function readHeader(jar: Uint8Array, entry: ZipEntry): { minor: number; major: number } | string {
  if (entry.flags & 1) return 'is encrypted, which no class loader reads';
  let head: Uint8Array;
  if (entry.method === 0) head = jar.subarray(entry.dataStart, Math.min(entry.dataEnd, entry.dataStart + HEADER_BYTES));
  else if (entry.method === 8) {
    const inflated = inflateHead(jar, entry.dataStart, entry.dataEnd, HEADER_BYTES);
    if (!inflated.ok) return `is not a class file: ${inflated.problem}`;
    head = inflated.bytes;
  } else return `is compressed with method ${entry.method}; a class loader reads stored (0) and deflated (8) entries`;
  if (head.length < HEADER_BYTES)
    return `is not a class file: it holds ${head.length} bytes, and a class file's header alone is ${HEADER_BYTES}`;
  const view = new DataView(head.buffer, head.byteOffset, HEADER_BYTES);
  if (view.getUint32(0) !== MAGIC) return 'is not a class file: it does not start with 0xCAFEBABE';
  const [minor, major] = [view.getUint16(4), view.getUint16(6)];
  if (major < OLDEST_CLASS_FILE) return `is not a class file: its version ${major} is older than any Java's`;
  return { minor, major };
}

/** What a release (or an edit) decides from the bytes: the Java to list it under, or one line saying why not. */
export type JavaDecision =
  | { ok: true; java: JavaVersion; classFileVersion?: number }
  /** `field`: the claim is what is wrong (400 naming javaVersion); `jar`: no claim can fix the bytes (422). */
  | { ok: false; line: string; wrong: 'javaVersion' | 'jar' };

/** How the refusal says to fix a JAR whose classes need more than its claim: recompile it (a release) or release it again (an edit). */
export type JarFix = 'compile' | 'release';

/**
 * Issue 39: the claim stands only if every counted class loads on it; without a claim, the
 * smallest listed Java that loads them all. A class for a Java the depot does not list, or one
 * compiled with --enable-preview, runs on no server the depot offers it to.
 */
export function decideJava(
  files: ClassFiles,
  claimed: JavaVersion | undefined,
  context: { jar: string; fix: JarFix },
): JavaDecision {
  const refuse = (line: string, wrong: 'javaVersion' | 'jar' = 'jar') => ({ ok: false, line, wrong }) as const;
  if (files.kind === 'unreadable') return refuse(`${shownEntry(files.entry)} ${files.problem}; rebuild the JAR`);
  if (files.kind === 'none') {
    if (claimed) return { ok: true, java: claimed };
    return refuse(
      `${context.jar} holds no class outside META-INF/versions/ (and module-info.class) to say which Java it needs: pass --java, the oldest Java it runs on (${listed()})`,
      'javaVersion',
    );
  }
  const { entry, major, preview } = files;
  const release = claimed ?? JAVA.at(-1)!.version;
  if (preview)
    return refuse(
      `${shownEntry(preview.entry)} is compiled with --enable-preview for Java ${javaOfClassFile(preview.major)} (class file ${preview.major}, minor 65535): it loads only on a JVM started with --enable-preview, which no server passes; compile without --enable-preview`,
    );
  const needed = listedJavaFor(major);
  if (needed === undefined)
    return refuse(
      `${shownEntry(entry)} is compiled for Java ${javaOfClassFile(major)} (class file ${major}), which the depot does not list (${listed()}): no server it serves that Java to exists here; ${context.fix === 'compile' ? `compile with --release ${release}` : `release a JAR compiled with --release ${release} instead`}`,
    );
  if (claimed === undefined) return { ok: true, java: needed, classFileVersion: major };
  if (!runsOnJava(needed, claimed))
    return refuse(
      `${shownEntry(entry)} is compiled for Java ${javaOfClassFile(major)} (class file ${major}): --java ${claimed} would offer it to Java ${claimed} servers, which cannot load it; pass --java ${needed}, ${context.fix === 'compile' ? `or compile with --release ${claimed}` : `or release a JAR compiled with --release ${claimed} instead`}`,
      'javaVersion',
    );
  return { ok: true, java: claimed, classFileVersion: major };
}

const listed = () => `${JAVA_VERSIONS.slice(0, -1).join(', ')} or ${JAVA_VERSIONS.at(-1)}`;

/** An entry's name as a refusal shows it: one harmless line, quoted when it holds what a line must not, cut when long. */
function shownEntry(name: string): string {
  return shownLine(name.length > 200 ? `${name.slice(0, 200)}...` : name);
}
