import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { sha256Hex } from '../server/digest.ts';

// The operator CLI runs from a bundle kept outside the sources (build/cli/launch.mjs), whose own
// location says nothing about the checkout: the launcher defines DEPOT_ROOT when it bundles.
declare const DEPOT_ROOT: string | undefined;

/** The project's root: where the sources a build digests live. */
export const ROOT = typeof DEPOT_ROOT === 'string' ? DEPOT_ROOT : resolve(import.meta.dirname, '..');

/** Every file under `path` (or `path` itself when it is a file), sorted. */
export async function listFiles(path: string): Promise<string[]> {
  const info = await stat(path);
  if (!info.isDirectory()) return [path];
  const entries = await readdir(path, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** A digest of the files under `inputs`, each by its path from the root and its bytes, after `label`. */
export async function digestSources(label: string, inputs: readonly string[]): Promise<string> {
  const parts: (string | Uint8Array)[] = [label];
  for (const input of inputs) {
    for (const file of await listFiles(input)) parts.push(relative(ROOT, file), await readFile(file));
  }
  return sha256Hex(...parts);
}
