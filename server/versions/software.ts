// SPEC 2.3: the server software names, by group. Order here is the order pages and errors list them.
export const SOFTWARE_GROUPS = {
  normal: ['PaperMC', 'Spigot', 'Bukkit', 'Purpur', 'Quilt', 'LeafMC'],
  folia: ['Folia', 'CanvasMC'],
  proxy: ['BungeeCord', 'Waterfall', 'Velocity'],
} as const;

export const SERVER_SOFTWARE = [...SOFTWARE_GROUPS.normal, ...SOFTWARE_GROUPS.folia, ...SOFTWARE_GROUPS.proxy] as const;

export type ServerSoftware = (typeof SERVER_SOFTWARE)[number];

const BY_LOWER_NAME = new Map<string, ServerSoftware>(SERVER_SOFTWARE.map((name) => [name.toLowerCase(), name]));

/** SPEC 2.3: names match case-insensitively; undefined for an unknown name. */
export function findSoftware(name: string): ServerSoftware | undefined {
  return BY_LOWER_NAME.get(name.toLowerCase());
}

export function isProxy(software: ServerSoftware): boolean {
  return (SOFTWARE_GROUPS.proxy as readonly string[]).includes(software);
}

/**
 * What a server runs plugins of at all: a proxy's, a Quilt mod loader's or a game server's. A build
 * for another kind is never a reason to switch software (a proxy cannot run a server's plugin).
 */
export function platformOf(software: ServerSoftware): 'proxy' | 'quilt' | 'server' {
  return isProxy(software) ? 'proxy' : software === 'Quilt' ? 'quilt' : 'server';
}
