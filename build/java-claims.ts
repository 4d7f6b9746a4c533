import type { Catalog } from '../server/versions/catalog.ts';
import { javaOfClassFile, listedJavaFor, runsOnJava } from '../server/versions/java.ts';

/**
 * Issue 39: a version in data/ listed for a Java below what its classes need, one warning line each
 * (the build prints them once, when it loads data/). Served as it is: the record is the operator's,
 * and `depot edit <id> --java <n>` raises it. Withdrawn versions are offered to no server: not named.
 */
export function javaClaimWarnings(catalog: Catalog): string[] {
  const lines: string[] = [];
  for (const version of catalog.versions) {
    const { id, pluginVersion, javaVersion: java, classFileVersion: major } = version;
    if (major === undefined || version.withdrawn) continue;
    const needed = listedJavaFor(major);
    const compiled = `its classes are compiled for Java ${javaOfClassFile(major)} (class file ${major})`;
    const listed = `[build] warning: ${id} (${pluginVersion}) is listed for Java ${java}, but ${compiled}`;
    if (needed === undefined)
      lines.push(
        `${listed}, which no Java the depot lists loads; withdraw it (depot withdraw ${id} --reason "...") and release a JAR compiled with --release ${java}`,
      );
    else if (!runsOnJava(needed, java))
      lines.push(
        `${listed}: Java ${java} servers cannot load it; served as it is until depot edit ${id} --java ${needed}`,
      );
  }
  return lines;
}
