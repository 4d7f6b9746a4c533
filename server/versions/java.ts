// Issue 39: the Java versions the depot lists, one line each: SPEC 2.1's four and Java 25, which
// every Minecraft 26.x server runs. `classFile` is the class-file major version that Java
// introduced (JVMS 4.1): a class of a higher major version does not load on it. The next LTS
// (Java 29, class file 73) is one more line.
export const JAVA = [
  { version: '8', classFile: 52 },
  { version: '11', classFile: 55 },
  { version: '17', classFile: 61 },
  { version: '21', classFile: 65 },
  { version: '25', classFile: 69 },
] as const;

export type JavaVersion = (typeof JAVA)[number]['version'];

/** The listed versions, oldest first: what paths, errors and pages enumerate. */
export const JAVA_VERSIONS = JAVA.map((java) => java.version) as unknown as readonly [JavaVersion, ...JavaVersion[]];

/** Class file 45 is Java 1.1; each Java since 1.2 adds one (JVMS 4.1: Java 8 is 52, Java 25 is 69). */
const JAVA_OF_CLASS_FILE_OFFSET = 44;

/** The Java release that introduced a class-file major version: 65 -> 21, 60 -> 16, 70 -> 26. */
export const javaOfClassFile = (major: number): number => Math.max(1, major - JAVA_OF_CLASS_FILE_OFFSET);

/** The smallest listed Java that loads classes of this major version; undefined when none does (70 and above today). */
export function listedJavaFor(major: number): JavaVersion | undefined {
  return JAVA.find((java) => java.classFile >= major)?.version;
}

/** The class-file major version a listed Java loads at most. */
export function classFileOf(version: JavaVersion): number {
  return JAVA.find((java) => java.version === version)!.classFile;
}

/** Java is a minimum: a build for Java 17 runs on 21, never one for a newer Java than the server has. */
export const runsOnJava = (build: string, server: string): boolean => Number(build) <= Number(server);
