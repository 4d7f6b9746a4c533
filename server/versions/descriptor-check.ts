import type { Declared } from './descriptor-schema.ts';
import { BUNGEE_KEYS } from './descriptor-schema.ts';
import type { Descriptor, DescriptorFile } from './descriptor.ts';
import { softwaresWhere, type ServerSoftware } from './software.ts';

// Issue 31: does the JAR back the softwares a release claims? Each rule is the platform's own loader
// (docs/releasing.md cites them). Pure: the descriptors read and the claimed softwares in, problems out.

type Found = Partial<Record<DescriptorFile, Descriptor>>;

/** Softwares built on Paper: they load paper-plugin.yml when the JAR has one, else plugin.yml. */
const PAPER_LOADERS = softwaresWhere(({ loader }) => loader === 'paper' || loader === 'folia');
const FOLIA = softwaresWhere(({ loader }) => loader === 'folia');
const SPIGOT = softwaresWhere(({ loader }) => loader === 'spigot');
const BUNGEE = softwaresWhere(({ loader }) => loader === 'bungee');
const VELOCITY = softwaresWhere(({ loader }) => loader === 'velocity');
/** The softwares that load a plugin.yml as Bukkit's: a JAR claimed for one of them has a Bukkit plugin.yml. */
const BUKKIT_LOADERS: readonly ServerSoftware[] = [...PAPER_LOADERS, ...SPIGOT];

/** One claim the JAR does not back: the line says what is missing and why, `fix` what to do. */
export type ClaimProblem = { problem: string; fix: string };

/** The claims the JAR's descriptors do not back, in the order claimed. Quilt is not checked: see docs/releasing.md. */
export function checkClaims(found: Found, software: readonly ServerSoftware[]): ClaimProblem[] {
  const problems: ClaimProblem[] = [];
  for (const name of software) {
    const problem = checkClaim(found, name, software);
    if (problem) problems.push({ problem: `--software ${name}: ${problem.problem}`, fix: problem.fix });
  }
  return problems;
}

function checkClaim(found: Found, name: ServerSoftware, software: readonly ServerSoftware[]): ClaimProblem | null {
  const loaded = paperLoads(found);
  if (FOLIA.includes(name)) {
    if (!loaded) return neither(name, 'add a plugin.yml with "folia-supported: true"');
    if (loaded.descriptor.declared.foliaSupported !== true)
      return {
        problem: `${loaded.file} lacks "folia-supported: true" (Folia loads only plugins that declare it)`,
        fix: 'add it',
      };
    return null;
  }
  if (PAPER_LOADERS.includes(name)) return loaded ? null : neither(name, 'add a plugin.yml or a paper-plugin.yml');
  if (SPIGOT.includes(name)) {
    if (found['plugin.yml']) return null;
    if (found['paper-plugin.yml'])
      return {
        problem: `paper-plugin.yml is the JAR's only descriptor (Paper plugins never load on ${name}, which reads plugin.yml)`,
        fix: `add a plugin.yml, or leave ${name} out`,
      };
    return { problem: `the JAR has no plugin.yml (${name} loads plugins by it)`, fix: 'add one' };
  }
  if (VELOCITY.includes(name) && !found['velocity-plugin.json'])
    return { problem: `the JAR has no velocity-plugin.json (${name} loads plugins by it)`, fix: 'add one' };
  if (BUNGEE.includes(name) && !found['bungee.yml'] && !isBungeePluginYml(found['plugin.yml'], software))
    return {
      problem: found['plugin.yml']
        ? `the JAR has no bungee.yml and its plugin.yml is a Bukkit one (${name} reads bungee.yml, else plugin.yml with BungeeCord's keys: ${BUNGEE_KEYS.join(', ')})`
        : `the JAR has neither bungee.yml nor plugin.yml (${name} loads plugins by them)`,
      fix: 'add a bungee.yml',
    };
  return null;
}

function neither(name: ServerSoftware, fix: string): ClaimProblem {
  return { problem: `the JAR has neither plugin.yml nor paper-plugin.yml (${name} loads plugins by them)`, fix };
}

/** Paper (and its forks) load paper-plugin.yml when the JAR has one, plugin.yml otherwise. */
function paperLoads(found: Found): { file: DescriptorFile; descriptor: Descriptor } | undefined {
  const paper = found['paper-plugin.yml'];
  if (paper) return { file: 'paper-plugin.yml', descriptor: paper };
  const plugin = found['plugin.yml'];
  return plugin ? { file: 'plugin.yml', descriptor: plugin } : undefined;
}

/**
 * A plugin.yml BungeeCord loads as its own: its main class extends BungeeCord's Plugin, so the same
 * file cannot also serve a Bukkit server the release claims; and it says so by BungeeCord's own
 * spellings (`depends`, `softDepends`), or holds no key but those BungeeCord's PluginDescription reads.
 */
function isBungeePluginYml(plugin: Descriptor | undefined, software: readonly ServerSoftware[]): boolean {
  if (!plugin || software.some((name) => BUKKIT_LOADERS.includes(name))) return false;
  if (plugin.keys.includes('depends') || plugin.keys.includes('softDepends')) return true;
  return plugin.keys.every((key) => BUNGEE_KEYS.includes(key));
}

/**
 * What the record stores: what the descriptor the claimed softwares load declares. Paper's choice
 * first (paper-plugin.yml over plugin.yml), then Spigot's plugin.yml, then the proxies' descriptors.
 */
export function declaredFor(found: Found, software: readonly ServerSoftware[]): Declared {
  const claims = (names: readonly ServerSoftware[]) => software.some((name) => names.includes(name));
  const paper = paperLoads(found);
  if (claims(PAPER_LOADERS) && paper) return paper.descriptor.declared;
  if (claims(SPIGOT) && found['plugin.yml']) return found['plugin.yml'].declared;
  if (claims(BUNGEE)) {
    if (found['bungee.yml']) return found['bungee.yml'].bungee;
    if (found['plugin.yml'] && isBungeePluginYml(found['plugin.yml'], software)) return found['plugin.yml'].bungee;
  }
  if (claims(VELOCITY) && found['velocity-plugin.json']) return found['velocity-plugin.json'].declared;
  return {};
}
