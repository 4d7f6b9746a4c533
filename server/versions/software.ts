// Issue 39: each server software is one record. What the depot knows of a software (its SPEC 2.3
// group, what it runs plugins of, which descriptor backs a claim for it, Modrinth's name for it, the
// names the pages take, its end of life) is one line of SOFTWARE, typed as a Record of every software so
// that the type system checks each has every fact: a new software cannot pass a check unnoticed.
// compat.ts, descriptor-check.ts, modrinth-loaders.ts, pages.ts and the API's prose derive from it.

/** SPEC 2.3's names, in the order pages and errors list them (group by group). */
export const SERVER_SOFTWARE = [
  'PaperMC',
  'Spigot',
  'Bukkit',
  'Purpur',
  'Quilt',
  'LeafMC',
  'Folia',
  'CanvasMC',
  'BungeeCord',
  'Waterfall',
  'Velocity',
] as const;

export type ServerSoftware = (typeof SERVER_SOFTWARE)[number];

/** SPEC 2.3's groups. */
export const GROUPS = ['normal', 'folia', 'proxy'] as const;
type Group = (typeof GROUPS)[number];

/**
 * How a software finds a JAR's plugin (issue 31; docs/releasing.md cites each loader): `paper`
 * paper-plugin.yml, else plugin.yml; `folia` the same, declaring `folia-supported: true`; `spigot`
 * plugin.yml; `bungee` bungee.yml, else a plugin.yml of BungeeCord's keys; `velocity`
 * velocity-plugin.json; `unchecked` none the depot checks (Quilt is a mod loader).
 */
type Loader = 'paper' | 'folia' | 'spigot' | 'bungee' | 'velocity' | 'unchecked';

type SoftwareFacts = {
  group: Group;
  /** What it runs plugins of at all: a build for another platform is never a reason to switch software. */
  platform: 'server' | 'quilt' | 'proxy';
  loader: Loader;
  /**
   * The softwares whose builds it runs after its own, best first (issue 15, 31). Conservative: only
   * where the project's own documentation promises the other's plugins run; `source` says where.
   */
  runs: readonly ServerSoftware[];
  source: string;
  /** Paper's hard fork at 1.21.4: Spigot and Bukkit builds for later Minecraft versions are `unverified` on it. */
  hardForkedFromSpigot?: true;
  /** Also runs any build whose descriptor declares `folia-supported: true`, after the others. */
  runsFoliaSupported?: true;
  /** Modrinth's loader name first (what its API says), then the other names a client may send, lowercase. */
  modrinthLoaders: readonly [string, ...string[]];
  /** Names people type on the pages (/versions/paper/21), beside the lowercase name. */
  pageAliases: readonly string[];
  /** Ended by its makers, with where to go. */
  endOfLife?: { since: string; successor: ServerSoftware; url: string };
};

export const SOFTWARE: Readonly<Record<ServerSoftware, SoftwareFacts>> = {
  PaperMC: {
    group: 'normal',
    platform: 'server',
    loader: 'paper',
    runs: ['Spigot', 'Bukkit', 'Folia'],
    source:
      "Paper is a Spigot fork and loads Bukkit/Spigot plugins (docs.papermc.io); hard fork at 1.21.4 (forums.papermc.io/threads/the-future-of-paper-hard-fork.1451); Folia plugins run on Paper, whose schedulers handle Folia's region schedulers (docs.papermc.io/paper/dev/folia-support)",
    hardForkedFromSpigot: true,
    modrinthLoaders: ['paper', 'papermc'],
    pageAliases: ['paper'],
  },
  Spigot: {
    group: 'normal',
    platform: 'server',
    loader: 'spigot',
    runs: ['Bukkit'],
    source: 'Spigot is CraftBukkit with patches; Bukkit plugins run (spigotmc.org)',
    modrinthLoaders: ['spigot'],
    pageAliases: [],
  },
  Bukkit: {
    group: 'normal',
    platform: 'server',
    loader: 'spigot',
    runs: [],
    source: 'the base API',
    modrinthLoaders: ['bukkit'],
    pageAliases: [],
  },
  Purpur: {
    group: 'normal',
    platform: 'server',
    loader: 'paper',
    runs: ['PaperMC', 'Spigot', 'Bukkit', 'Folia'],
    source:
      'Purpur is a Paper fork, "drop-in replacement for Paper" (purpurmc.org docs); Paper\'s hard fork and Folia support as above',
    hardForkedFromSpigot: true,
    modrinthLoaders: ['purpur'],
    pageAliases: ['purpurmc'],
  },
  Quilt: {
    group: 'normal',
    platform: 'quilt',
    loader: 'unchecked',
    runs: [],
    source: "a mod loader (Fabric's fork), no Bukkit plugin API",
    modrinthLoaders: ['quilt'],
    pageAliases: [],
  },
  LeafMC: {
    group: 'normal',
    platform: 'server',
    loader: 'paper',
    runs: ['PaperMC', 'Purpur', 'Spigot', 'Bukkit', 'Folia'],
    source: "Leaf is a Paper fork (via Gale) whose API applies Purpur's (leafmc.one, github.com/Winds-Studio/Leaf)",
    hardForkedFromSpigot: true,
    // No Modrinth loader: its own name stands in.
    modrinthLoaders: ['leafmc'],
    pageAliases: ['leaf'],
  },
  Folia: {
    group: 'folia',
    platform: 'server',
    loader: 'folia',
    // Regionised threading breaks plugins not written for it: its own builds, then folia-supported ones.
    runs: [],
    source:
      'regionised threading: only plugins declaring `folia-supported: true` load, whatever they were built for (docs.papermc.io/folia, github.com/PaperMC/Folia)',
    runsFoliaSupported: true,
    modrinthLoaders: ['folia'],
    pageAliases: [],
  },
  CanvasMC: {
    group: 'folia',
    platform: 'server',
    loader: 'folia',
    runs: ['Folia'],
    source: 'Canvas is a Folia fork and runs Folia plugins (canvasmc.io)',
    runsFoliaSupported: true,
    modrinthLoaders: ['canvasmc'],
    pageAliases: ['canvas'],
  },
  BungeeCord: {
    group: 'proxy',
    platform: 'proxy',
    loader: 'bungee',
    runs: [],
    source: 'the base proxy API',
    modrinthLoaders: ['bungeecord'],
    pageAliases: ['bungee'],
  },
  Waterfall: {
    group: 'proxy',
    platform: 'proxy',
    loader: 'bungee',
    runs: ['BungeeCord'],
    source:
      'Waterfall is a BungeeCord fork and runs BungeeCord plugins; end of life since 2024-03, successor Velocity (github.com/PaperMC/Waterfall, forums.papermc.io/threads/1088)',
    modrinthLoaders: ['waterfall'],
    pageAliases: [],
    endOfLife: { since: '2024-03', successor: 'Velocity', url: 'https://papermc.io/software/velocity' },
  },
  Velocity: {
    group: 'proxy',
    platform: 'proxy',
    loader: 'velocity',
    runs: [],
    source: 'its own plugin API, no BungeeCord plugins',
    modrinthLoaders: ['velocity'],
    pageAliases: [],
  },
};

/** The softwares with a fact: `softwaresWhere((s) => s.loader === 'folia')`. */
export const softwaresWhere = (test: (facts: SoftwareFacts) => boolean): ServerSoftware[] =>
  SERVER_SOFTWARE.filter((software) => test(SOFTWARE[software]));

/** SPEC 2.3's groups, each in SERVER_SOFTWARE's order. */
export const SOFTWARE_GROUPS = Object.fromEntries(
  GROUPS.map((group) => [group, softwaresWhere((software) => software.group === group)]),
) as Record<Group, ServerSoftware[]>;

const BY_LOWER_NAME = new Map<string, ServerSoftware>(SERVER_SOFTWARE.map((name) => [name.toLowerCase(), name]));

/** SPEC 2.3: names match case-insensitively; undefined for an unknown name. */
export function findSoftware(name: string): ServerSoftware | undefined {
  return BY_LOWER_NAME.get(name.toLowerCase());
}

export const isProxy = (software: ServerSoftware): boolean => SOFTWARE[software].group === 'proxy';

/**
 * What a server runs plugins of at all: a proxy's, a Quilt mod loader's or a game server's. A build
 * for another kind is never a reason to switch software (a proxy cannot run a server's plugin).
 */
export const platformOf = (software: ServerSoftware): SoftwareFacts['platform'] => SOFTWARE[software].platform;
