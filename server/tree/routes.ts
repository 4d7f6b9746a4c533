import { readFile } from 'node:fs/promises';
import { parseFile } from '../data-files.ts';
import { ManifestHead, RouteEntry } from './format.ts';
import { parseJson, splitManifest } from './manifest-text.ts';

/**
 * A tree's routes, looked up one by one: a request touches one or two of the tens of thousands, so
 * each is validated when first asked for. `paths` lists those `has` holds, in the manifest's order.
 */
export type RouteLookup = {
  get(path: string): RouteEntry | undefined;
  has(path: string): boolean;
  paths(): Iterable<string>;
};

/** A tree without routes: the build's own, whose answers are being rendered. */
export const NO_ROUTES: RouteLookup = { get: () => undefined, has: () => false, paths: () => [] };

/** A manifest's checked head and its routes, split into lines (each checked when first looked up). */
export async function readManifest(file: string): Promise<{ head: ManifestHead; routes: RouteTable }> {
  const manifest = splitManifest(await readFile(file, 'utf8'), file);
  return { head: parseFile(ManifestHead, manifest.head, file), routes: new RouteTable(manifest.routes, file) };
}

/**
 * A manifest's routes, each parsed (from its line's text) and validated with RouteEntry the first
 * time it is looked up, then kept.
 */
export class RouteTable implements RouteLookup {
  readonly #raw: ReadonlyMap<string, unknown>;
  readonly #file: string;
  readonly #checked = new Map<string, RouteEntry>();

  constructor(raw: ReadonlyMap<string, unknown>, file: string) {
    this.#raw = raw;
    this.#file = file;
  }

  get(path: string): RouteEntry | undefined {
    const checked = this.#checked.get(path);
    if (checked || !this.#raw.has(path)) return checked;
    const raw = this.#raw.get(path);
    const where = `${this.#file}: routes[${JSON.stringify(path)}]`;
    const entry = parseFile(RouteEntry, typeof raw === 'string' ? parseJson(raw, where) : raw, where);
    this.#checked.set(path, entry);
    return entry;
  }

  has(path: string): boolean {
    return this.#raw.has(path);
  }

  paths() {
    return this.#raw.keys();
  }
}

/** The routes of `all` that `keeps` keeps, each asked once. */
export class KeptRoutes implements RouteLookup {
  readonly #all: RouteLookup;
  readonly #keeps: (path: string) => boolean;
  readonly #kept = new Map<string, boolean>();

  constructor(all: RouteLookup, keeps: (path: string) => boolean) {
    this.#all = all;
    this.#keeps = keeps;
  }

  has(path: string): boolean {
    if (!this.#all.has(path)) return false;
    let kept = this.#kept.get(path);
    if (kept === undefined) this.#kept.set(path, (kept = this.#keeps(path)));
    return kept;
  }

  get(path: string): RouteEntry | undefined {
    return this.has(path) ? this.#all.get(path) : undefined;
  }

  *paths() {
    for (const path of this.#all.paths()) if (this.has(path)) yield path;
  }
}
