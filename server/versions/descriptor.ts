import { strFromU8, unzipSync } from 'fflate';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { describeIssues } from '../helpers/describe-issues.ts';
import { escapeForbidden } from '../free-text.ts';
import {
  BungeeYml,
  PaperPluginYml,
  PluginYml,
  VelocityPluginJson,
  declaredByBungeeYml,
  declaredByPaperPluginYml,
  declaredByPluginYml,
  declaredByVelocityJson,
  type Declared,
} from './descriptor-schema.ts';

// Issue 31: the plugin descriptors of a JAR, read to check what a release claims. The JAR has passed
// inspectJar (a sound zip); its descriptors are still untrusted: bounded before they are inflated,
// parsed with aliases bounded, and checked with zod. Pure: bytes in, a result out.

const DESCRIPTOR_FILES = ['plugin.yml', 'paper-plugin.yml', 'bungee.yml', 'velocity-plugin.json'] as const;
export type DescriptorFile = (typeof DESCRIPTOR_FILES)[number];

/** Real descriptors are a few KiB; plugins with hundreds of permissions stay well under this. */
const DESCRIPTOR_MAX_BYTES = 256 * 1024;
/** SnakeYAML's own default is 50 aliases per document (LoaderOptions.maxAliasesForCollections). */
const MAX_ALIASES = 50;

/** No descriptor nests lists in lists that deep; the parser recurses per level, for seconds at 200,000. */
const MAX_FLOW_DEPTH = 64;

/**
 * Issue 41: the YAML library checks a mapping's keys for duplicates pair by pair (27,000 keys took
 * 16 s of CPU). Every key is followed by a `:`, so their count bounds the keys (colons in strings
 * count too); the largest real plugin.yml files (permissions and commands) hold a few hundred.
 */
const MAX_COLONS = 5_000;

/** The deepest run of unclosed `[` and `{`: an upper bound on YAML's flow nesting (brackets in strings count too). */
function flowDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (const char of text) {
    if (char === '[' || char === '{') deepest = Math.max(deepest, ++depth);
    else if ((char === ']' || char === '}') && depth > 0) depth--;
  }
  return deepest;
}

/** One descriptor as read: what it declares, and its top-level keys (BungeeCord's plugin.yml is told by them). */
export type Descriptor = { declared: Declared; bungee: Declared; keys: string[] };

/** The JAR's descriptors that are there and valid, or the first one that is not, as one line naming it. */
type ReadDescriptors =
  { ok: true; found: Partial<Record<DescriptorFile, Descriptor>> } | { ok: false; problem: string };

export function readDescriptors(jar: Uint8Array): ReadDescriptors {
  const problems: string[] = [];
  const seen = new Set<string>();
  const texts = unzipSync(jar, {
    filter: (file) => {
      if (!(DESCRIPTOR_FILES as readonly string[]).includes(file.name)) return false;
      if (seen.has(file.name)) problems.push(`${file.name} is in the JAR twice; keep one`);
      seen.add(file.name);
      const size = Math.max(file.originalSize, file.size);
      if (size > DESCRIPTOR_MAX_BYTES)
        problems.push(`${file.name} is ${size} bytes; a descriptor may hold at most ${DESCRIPTOR_MAX_BYTES} bytes`);
      return problems.length === 0 && (file.compression === 0 || file.compression === 8);
    },
  });
  if (problems.length > 0) return { ok: false, problem: problems[0]! };
  const found: Partial<Record<DescriptorFile, Descriptor>> = {};
  for (const file of DESCRIPTOR_FILES) {
    const bytes = texts[file];
    if (bytes === undefined) continue;
    const read = parseDescriptor(file, bytes);
    if (typeof read === 'string')
      return { ok: false, problem: `${file}: ${shorten(escapeForbidden(read))}; fix the file` };
    found[file] = read;
  }
  return { ok: true, found };
}

/** One descriptor's bytes, parsed and checked; a string says why it is refused. */
function parseDescriptor(file: DescriptorFile, bytes: Uint8Array): Descriptor | string {
  // The declared size bounds the allocation; a lying header could still inflate more.
  if (bytes.length > DESCRIPTOR_MAX_BYTES) return `more than ${DESCRIPTOR_MAX_BYTES} bytes inflated`;
  let text: string;
  try {
    text = strFromU8(bytes);
  } catch {
    return 'not UTF-8 text';
  }
  const value = file === 'velocity-plugin.json' ? parseJson(text) : parseYaml(text);
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'must be a mapping of keys to values';
  const keys = Object.keys(value);
  switch (file) {
    case 'plugin.yml':
      return checked(PluginYml, value, (yml) => ({
        declared: declaredByPluginYml(yml),
        bungee: declaredByBungeeYml(yml),
        keys,
      }));
    case 'paper-plugin.yml':
      return checked(PaperPluginYml, value, (yml) => ({ declared: declaredByPaperPluginYml(yml), bungee: {}, keys }));
    case 'bungee.yml':
      return checked(BungeeYml, value, (yml) => ({ declared: {}, bungee: declaredByBungeeYml(yml), keys }));
    case 'velocity-plugin.json':
      return checked(VelocityPluginJson, value, (json) => ({
        declared: declaredByVelocityJson(json),
        bungee: {},
        keys,
      }));
  }
}

function checked<S extends z.ZodType>(
  schema: S,
  value: unknown,
  read: (parsed: z.output<S>) => Descriptor,
): Descriptor | string {
  const parsed = schema.safeParse(value);
  return parsed.success ? read(parsed.data) : describeIssues(parsed.error.issues.slice(0, 3));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    return `not valid JSON (${(error as Error).message.split('\n')[0]})`;
  }
}

/**
 * YAML 1.1, as SnakeYAML reads plugin.yml for Bukkit, Paper and BungeeCord (`yes` is true there).
 * One document; its first error refuses it. A stack overflow on absurd nesting is a refusal too.
 */
function parseYaml(text: string): unknown {
  if (flowDepth(text) > MAX_FLOW_DEPTH) return `nests [ and { deeper than ${MAX_FLOW_DEPTH} levels`;
  const colons = text.split(':').length - 1;
  if (colons > MAX_COLONS) return `holds ${colons} keys or more; a descriptor may hold at most ${MAX_COLONS}`;
  try {
    const document = parseDocument(text, { version: '1.1', uniqueKeys: true, prettyErrors: false });
    const [error] = document.errors;
    if (error) return `not valid YAML (${error.message.split('\n')[0]})`;
    return document.toJS({ maxAliasCount: MAX_ALIASES }) as unknown;
  } catch (error) {
    return `not valid YAML (${(error as Error).message.split('\n')[0]})`;
  }
}

/** A refusal stays one readable line, whatever a hostile key or value holds. */
function shorten(text: string): string {
  return text.length <= 240 ? text : `${text.slice(0, 240)}...`;
}
