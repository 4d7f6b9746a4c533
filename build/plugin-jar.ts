// Plugin JARs made from text: the demo data's, the tests' and the bench's. No third-party file is
// shipped, and the same contents always give the same bytes (fixed timestamps).
import { strToU8, zipSync, type Zippable } from 'fflate';

export type PluginJarContents = {
  /** Text files by path in the archive, in this order: descriptors (plugin.yml, velocity-plugin.json, ...) and any other. */
  files: Record<string, string>;
  /** MANIFEST.MF attributes after `Manifest-Version: 1.0`. */
  manifest?: Record<string, string>;
  /** Bytes of incompressible filler, stored as assets/blob.bin, for a JAR of about that size. */
  filler?: number;
  /** Binary files by path (compiled classes), after `files`. */
  binaries?: Record<string, Uint8Array>;
};

const MTIME = new Date('2026-01-01T00:00:00.000Z');

/** A valid plugin JAR: META-INF/MANIFEST.MF first, then `files` and `binaries`, then the filler (stored, not deflated). */
export function makePluginJar(contents: PluginJarContents): Uint8Array {
  const attributes = Object.entries({ 'Manifest-Version': '1.0', ...contents.manifest }).map(
    ([name, value]) => `${name}: ${value}\r\n`,
  );
  const entries: Zippable = { 'META-INF/MANIFEST.MF': strToU8(`${attributes.join('')}\r\n`) };
  for (const [name, text] of Object.entries(contents.files)) entries[name] = strToU8(text);
  for (const [name, bytes] of Object.entries(contents.binaries ?? {})) entries[name] = bytes;
  if (contents.filler) entries['assets/blob.bin'] = [fillerBytes(contents.filler), { level: 0 }];
  return zipSync(entries, { mtime: MTIME, level: 6 });
}

function fillerBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 2654435761) >>> 24;
  return bytes;
}
