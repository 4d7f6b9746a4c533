import { JAVA_VERSIONS, type JavaVersion } from './java.ts';
import { isAfterMinecraft, releaseOf } from './minecraft.ts';

/**
 * Issue 39: the least Java every server of a Minecraft version runs, one line per generation,
 * oldest first: Mojang's own requirement (its release notes for 1.17, 1.18, 1.20.5 and 26.1), so
 * a server of that version may run no newer Java than this. A line holds from `since` up to the
 * next line's `since`; the first holds for everything before the second.
 */
export const MINECRAFT_JAVA = [
  { since: '1.0', last: '1.16.5', java: 8 },
  { since: '1.17', last: '1.17.1', java: 16 },
  { since: '1.18', last: '1.20.4', java: 17 },
  { since: '1.20.5', last: '1.21.11', java: 21 },
  { since: '26.1', last: undefined, java: 25 },
] as const;

/**
 * The least Java a server of `minecraft` (a release or a 26.x pre-release: a pre-release runs
 * what its release runs, so 26.1-snapshot-1 needs 25) is guaranteed to run.
 */
export function minimumJavaOf(minecraft: string): number {
  const release = releaseOf(minecraft);
  const line = MINECRAFT_JAVA.filter((row) => !isAfterMinecraft(row.since, release)).at(-1) ?? MINECRAFT_JAVA[0];
  return line.java;
}

/**
 * The newest listed Java at most `minecraft`'s guarantee: the Java of the newest builds every
 * server of that version runs (1.17's Java 16 lists no build above Java 11).
 */
export function guaranteedJavaOf(minecraft: string): JavaVersion {
  const java = minimumJavaOf(minecraft);
  return JAVA_VERSIONS.filter((listed) => Number(listed) <= java).at(-1) ?? JAVA_VERSIONS[0];
}
