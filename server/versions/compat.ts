import { isAfterMinecraft } from './minecraft.ts';
import { SERVER_SOFTWARE, SOFTWARE, softwaresWhere, type ServerSoftware } from './software.ts';

/**
 * Issue 15: which softwares' plugins a server runs, best first: its own builds, then those of the
 * softwares it is built on (SOFTWARE's `runs`, with the source of each edge; docs/api.md shows them).
 */
export const RUNS_PLUGINS_OF = Object.fromEntries(
  SERVER_SOFTWARE.map((software) => [software, [software, ...SOFTWARE[software].runs]]),
) as unknown as Readonly<Record<ServerSoftware, readonly ServerSoftware[]>>;

/** Servers that load any plugin declaring `folia-supported: true`, whatever software it was released for, after their table's builds. */
export const RUNS_FOLIA_SUPPORTED: readonly ServerSoftware[] = softwaresWhere(
  (facts) => facts.runsFoliaSupported === true,
);

/**
 * Paper's hard fork (forums.papermc.io, "The future of Paper - Hard fork"): from 1.21.4 on Paper is
 * no longer bound to Spigot's changes, so a Spigot or Bukkit build for a later Minecraft version is
 * not promised to run on Paper or its forks: offered after every other build but Folia's, `unverified`.
 */
const HARD_FORKED_FROM_SPIGOT = softwaresWhere((facts) => facts.hardForkedFromSpigot === true);
const SPIGOT_APIS = softwaresWhere((facts) => facts.loader === 'spigot');
const HARD_FORK_MINECRAFT = '1.21.4';

/** Softwares their makers ended, with where to go. */
export const END_OF_LIFE = Object.fromEntries(
  SERVER_SOFTWARE.flatMap((software) => {
    const { endOfLife } = SOFTWARE[software];
    return endOfLife ? [[software, endOfLife]] : [];
  }),
) as Partial<Record<ServerSoftware, NonNullable<(typeof SOFTWARE)[ServerSoftware]['endOfLife']>>>;

/**
 * One step of a server's chain: the builds of one software (`unverified`: only those past the hard
 * fork, which the plain step leaves out), or any build marked foliaSupported.
 */
export type ChainStep = { software: ServerSoftware; unverified?: true } | { foliaSupported: true };

/**
 * A server's chain, best first: RUNS_PLUGINS_OF; on Paper and its forks the Spigot and Bukkit builds
 * past the hard fork after every other step but Folia's (the last fallback); on Folia and CanvasMC
 * the foliaSupported builds last.
 */
export function chainOf(server: ServerSoftware): ChainStep[] {
  const table = RUNS_PLUGINS_OF[server];
  if (RUNS_FOLIA_SUPPORTED.includes(server))
    return [...table.map((software) => ({ software })), { foliaSupported: true }];
  const steps: ChainStep[] = table.filter((name) => name !== 'Folia').map((software) => ({ software }));
  if (HARD_FORKED_FROM_SPIGOT.includes(server))
    for (const software of table.filter((name) => SPIGOT_APIS.includes(name)))
      steps.push({ software, unverified: true });
  if (table.includes('Folia')) steps.push({ software: 'Folia' });
  return steps;
}

/** What a step asks of a build beside its software: the hard-fork split, read on the server's or the build's Minecraft version. */
type Build = {
  serverSoftware: readonly ServerSoftware[];
  foliaSupported?: boolean | undefined;
  minecraftVersion?: string | undefined;
};

/**
 * Past the hard fork: with `?minecraft=` when the server's version is after 1.21.4; without it when
 * the build's highest supported version (`minecraftVersion`) is. A build stating no version, or a
 * snapshot name, is not.
 */
function isPastHardFork(build: Build, minecraft: string | undefined): boolean {
  const version = minecraft ?? build.minecraftVersion;
  return version !== undefined && isAfterMinecraft(version, HARD_FORK_MINECRAFT);
}

/** Does `step` of `server`'s chain take this build? */
export function stepTakes(
  step: ChainStep,
  server: ServerSoftware,
  build: Build,
  minecraft: string | undefined,
): boolean {
  if ('foliaSupported' in step) return build.foliaSupported === true;
  if (!build.serverSoftware.includes(step.software)) return false;
  if (!HARD_FORKED_FROM_SPIGOT.includes(server) || !SPIGOT_APIS.includes(step.software)) return true;
  return isPastHardFork(build, minecraft) === (step.unverified === true);
}

/** A server's chain as the API reference and docs/api.md say it: `Purpur, PaperMC, Spigot, Bukkit, (unverified: Spigot, Bukkit), Folia`. */
export function describeChain(server: ServerSoftware): string {
  const parts: string[] = [];
  const unverified: string[] = [];
  for (const step of chainOf(server)) {
    if ('foliaSupported' in step) parts.push('then any build marked `foliaSupported`');
    else if (step.unverified) unverified.push(step.software);
    else {
      if (unverified.length) parts.push(`(past the hard fork, unverified: ${unverified.splice(0).join(', ')})`);
      parts.push(step.software);
    }
  }
  if (unverified.length) parts.push(`(past the hard fork, unverified: ${unverified.join(', ')})`);
  return parts.join(', ');
}
