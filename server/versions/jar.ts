import { unzipSync } from 'fflate';

/** The descriptors each platform reads from a plugin JAR. */
export const PLUGIN_DESCRIPTORS = ['plugin.yml', 'paper-plugin.yml', 'bungee.yml', 'velocity-plugin.json'] as const;

/**
 * Lists a JAR's entries after checking it is a readable zip (central directory intact) that
 * carries a manifest or a plugin descriptor. Throws a one-line reason otherwise.
 */
export function inspectJar(bytes: Uint8Array): { entries: string[] } {
  const entries: string[] = [];
  try {
    unzipSync(bytes, {
      filter: (file) => {
        entries.push(file.name);
        return false; // list only; nothing is inflated
      },
    });
  } catch (error) {
    throw new Error(`not a zip/JAR archive (${(error as Error).message})`);
  }
  const known = ['META-INF/MANIFEST.MF', ...PLUGIN_DESCRIPTORS];
  if (!entries.some((name) => known.includes(name))) {
    throw new Error(
      `a zip without META-INF/MANIFEST.MF or a plugin descriptor (${PLUGIN_DESCRIPTORS.join(', ')}): not a plugin JAR`,
    );
  }
  return { entries };
}
