import { statSync } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { sha256Hex } from '../server/helpers/digest.ts';
import type { DataFileMemory } from '../server/data-file-memory.ts';

// The operator CLI runs from a bundle kept outside the sources (build/cli/launch.mjs), whose own
// location says nothing about the checkout: the launcher defines DEPOT_ROOT when it bundles.
declare const DEPOT_ROOT: string | undefined;

/** What digesting the build's own sources (server/, build/, site/) remembers of their files: their sha256. */
export type SourceFileValues = { sources: string };

/** The project's root: where the sources a build digests live. */
export const ROOT = typeof DEPOT_ROOT === 'string' ? DEPOT_ROOT : resolve(import.meta.dirname, '..');

/** What an answer's bytes are made by besides data/: the server, the build, and the packages they run on. */
const CODE_INPUTS = [join(ROOT, 'server'), join(ROOT, 'build'), join(ROOT, 'package-lock.json')];

/** A digest of the code behind the answers: a tree built by other code is not reused (server/tree/previous.ts). */
export function answerCodeDigest(memory?: DataFileMemory<SourceFileValues>): Promise<string> {
  return digestSources('answers', CODE_INPUTS, memory);
}

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

/**
 * A digest of the files under `inputs`, each by its path from the root and its bytes' sha256, after
 * `label`. With `memory` (the build cache), a file whose identity is as when it was last hashed is
 * not read again: a release digests the code twice, about 60 ms of reading and hashing otherwise.
 */
export async function digestSources(
  label: string,
  inputs: readonly string[],
  memory?: DataFileMemory<SourceFileValues>,
): Promise<string> {
  const parts: string[] = [label];
  for (const input of inputs) {
    for (const file of await listFiles(input)) {
      const name = relative(ROOT, file);
      const before = memory && statSync(file);
      let digest = before && memory!.recall('sources', name, before);
      if (digest === undefined) {
        digest = sha256Hex(await readFile(file));
        if (before) memory!.remember('sources', name, before, digest);
      }
      parts.push(name, digest);
    }
  }
  return sha256Hex(...parts);
}
