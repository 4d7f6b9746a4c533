import { DataError } from '../data-files.ts';

/**
 * manifest.json as the build writes it: JSON whose head (format, source) is the first line and
 * whose routes come one a line, so that a reader splits it into entries without parsing them. At
 * 10,000 versions the manifest holds 54,000 routes (35 MB): parsing all of it cost the origin 0.25 s
 * before it could answer a release, and the next build as much again, though either needs a few
 * entries parsed (the origin, those it is asked for; a release, those it renders again).
 */

/** A route's entry: as rendered, or the text of one read from a manifest, kept as written. */
export type EntryOrText<E> = E | string;

/**
 * The text of a manifest with `routes` in their order, each entry one line. The head is the tree's
 * (ManifestHead, in format.ts): this file knows the layout of the text, not what the head holds.
 */
export function manifestText<E>(head: Readonly<Record<string, unknown>>, routes: Iterable<[string, EntryOrText<E>]>) {
  const lines: string[] = [];
  for (const [path, entry] of routes)
    lines.push(`${JSON.stringify(path)}:${typeof entry === 'string' ? entry : JSON.stringify(entry)}`);
  return `${JSON.stringify(head).slice(0, -1)},"routes":{\n${lines.join(',\n')}\n}}\n`;
}

/**
 * A manifest's head and its routes' entries as text, unparsed. A manifest in other JSON (one line,
 * as builds wrote it before) is parsed whole and its entries given as values. Throws DataError for
 * text that is neither.
 */
export function splitManifest(text: string, file: string): { head: unknown; routes: Map<string, unknown> } {
  const firstBreak = text.indexOf('\n');
  const opening = text.slice(0, firstBreak);
  if (firstBreak < 0 || !opening.endsWith(',"routes":{')) return parsedWhole(text, file);
  const head = parseJson(`${opening.slice(0, -',"routes":{'.length)}}`, file);
  const routes = new Map<string, unknown>();
  const end = text.lastIndexOf('\n}}');
  if (end < firstBreak || text.slice(end).trimEnd() !== '\n}}')
    throw new DataError(`${file}: cut short (no closing "}}" line)`);
  let start = firstBreak + 1;
  while (start < end) {
    let stop = text.indexOf('\n', start);
    if (stop < 0 || stop > end) stop = end;
    const line = text.slice(start, text[stop - 1] === ',' ? stop - 1 : stop);
    const keyEnd = jsonStringEnd(line);
    if (keyEnd < 0 || line[keyEnd] !== ':') throw new DataError(`${file}: a route line is not "path":{...}`);
    routes.set(parseJson(line.slice(0, keyEnd), file) as string, line.slice(keyEnd + 1));
    start = stop + 1;
  }
  return { head, routes };
}

function parsedWhole(text: string, file: string) {
  const whole = parseJson(text, file);
  if (!whole || typeof whole !== 'object' || Array.isArray(whole)) throw new DataError(`${file}: not a manifest`);
  const { routes, ...head } = whole as { routes?: unknown };
  if (!routes || typeof routes !== 'object' || Array.isArray(routes))
    throw new DataError(`${file}: routes: must be an object of URL paths`);
  return { head, routes: new Map(Object.entries(routes)) };
}

/** Where the JSON string at the start of `line` ends (just past its closing quote), or -1. */
function jsonStringEnd(line: string): number {
  if (line[0] !== '"') return -1;
  for (let i = 1; i < line.length; i++) {
    if (line[i] === '\\') i++;
    else if (line[i] === '"') return i + 1;
  }
  return -1;
}

export function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new DataError(`${file}: not valid JSON (${(error as Error).message})`);
  }
}
