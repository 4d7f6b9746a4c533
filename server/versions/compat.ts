import type { ServerSoftware } from './software.ts';

/**
 * Issue 15: which softwares' plugins a server runs, best first: its own builds, then those of the
 * softwares it is built on. The one table of compatible resolution; docs/api.md gives
 * the source of each edge. Conservative: an edge is here only where the fork's own documentation
 * promises the parent's plugins run (Leaf does not promise Purpur's API; Quilt is a mod loader).
 */
/** Java is a minimum: a build for Java 17 runs on 21, never one for a newer Java than the server has. */
export const runsOnJava = (build: string, server: string) => Number(build) <= Number(server);

export const RUNS_PLUGINS_OF: Readonly<Record<ServerSoftware, readonly ServerSoftware[]>> = {
  PaperMC: ['PaperMC', 'Spigot', 'Bukkit'],
  Spigot: ['Spigot', 'Bukkit'],
  Bukkit: ['Bukkit'],
  Purpur: ['Purpur', 'PaperMC', 'Spigot', 'Bukkit'],
  Quilt: ['Quilt'],
  LeafMC: ['LeafMC', 'PaperMC', 'Spigot', 'Bukkit'],
  // Folia's regionised threading breaks plugins not written for it: only its own builds.
  Folia: ['Folia'],
  CanvasMC: ['CanvasMC', 'Folia'],
  BungeeCord: ['BungeeCord'],
  Waterfall: ['Waterfall', 'BungeeCord'],
  Velocity: ['Velocity'],
};
