import semver from 'semver';
import { z } from 'zod';
import { CHANNELS } from './channels.ts';
import { SERVER_SOFTWARE, findSoftware } from './software.ts';
import { JAVA_VERSIONS } from './java.ts';
import { MINECRAFT_NAME, highestMinecraft, isValidRange } from './minecraft.ts';
import { refuseForbiddenText } from '../free-text.ts';
import { ChangelogMarkdown } from '../changelog-markdown.ts';

/** Issue 15: the Minecraft versions a build runs on, as inclusive ranges. */
export const MinecraftRanges = z
  .array(
    z
      .strictObject({ from: z.string(), to: z.string() })
      .refine(isValidRange, {
        error:
          'must be {from, to} with from <= to, such as 1.20.6 and 1.21.4 (to may be 1.21.x), or a 26.x pre-release such as 26.2-snapshot-1 as both',
      })
      .meta({ id: 'MinecraftRange' }),
  )
  .min(1)
  .max(32);

/** minecraftVersions comes with minecraftVersion, which holds its highest version: clients reading only SPEC's field see that. */
function checkMinecraftVersions(
  record: { minecraftVersion?: string | undefined; minecraftVersions?: { from: string; to: string }[] | undefined },
  ctx: z.RefinementCtx,
) {
  const { minecraftVersion, minecraftVersions } = record;
  if (!minecraftVersions || minecraftVersions.some((range) => !isValidRange(range))) return;
  const highest = highestMinecraft(minecraftVersions);
  if (minecraftVersion !== highest)
    ctx.addIssue({
      code: 'custom',
      message: `must be ${JSON.stringify(highest)}, the highest of minecraftVersions`,
      input: minecraftVersion,
      path: ['minecraftVersion'],
    });
}

/** `?minecraft=`: the game version a server runs; issue 39: 26.x releases and pre-releases too. */
const MinecraftVersion = z
  .string()
  .regex(MINECRAFT_NAME, {
    error: 'must be a Minecraft version such as 1.21.4 or 1.21, 26.1.1, or a 26.x pre-release such as 26.2-snapshot-1',
  })
  .meta({
    description:
      'The Minecraft version the server runs: a release such as 1.21.4, 1.21 or 26.1.1, or a 26.x pre-release (26.2-snapshot-1, 26.2-pre-1, 26.2-rc-1), which only builds naming it run on (a range of releases never includes one)',
    example: '1.21.4',
  });

export const PLUGIN_VERSION_ID = /^plugin-\d+-[A-Za-z0-9]+$/;

export const JavaVersion = z
  .enum(JAVA_VERSIONS, {
    error: (issue) =>
      `Unknown Java version ${JSON.stringify(issue.input)}; expected one of ${JAVA_VERSIONS.join(', ')}`,
  })
  .meta({ description: 'Java version' });

/** SPEC 2.3: any letter case in, the canonical spelling out. */
export const ServerSoftwareName = z
  .string()
  .transform((name, ctx) => {
    const software = findSoftware(name);
    if (!software) {
      ctx.addIssue({
        code: 'custom',
        message: `Unknown server software ${JSON.stringify(name)}; expected one of ${SERVER_SOFTWARE.join(', ')}`,
      });
      return z.NEVER;
    }
    return software;
  })
  .meta({ description: `Server software, any letter case: ${SERVER_SOFTWARE.join(', ')}`, example: 'papermc' });

export const SemVer = z
  .string()
  .refine((value) => semver.valid(value) === value, { error: 'must be a semantic version such as 1.4.0' });

export const Channel = z.enum(CHANNELS, { error: `must be one of ${CHANNELS.join(', ')}` }).meta({
  description:
    'Release channel: `release` (the default; a record without one is a release), `beta` or `alpha`. Only releases are "latest" unless a client asks with `?channel=`',
});

/** A name or note of one line (issue 27): the character rule; `]]>` allowed, since every output escapes it. */
const LineText = (max: number) => z.string().min(1).max(max).superRefine(refuseForbiddenText());

/** A version or a file name of one line: the character rule, and no `]]>` either (issue 27). */
const NameText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .superRefine(refuseForbiddenText({ cdata: false }));

const IsoTimestamp = z.iso.datetime({ precision: 3, error: 'must be an ISO 8601 UTC timestamp with milliseconds' });

/** Why a version was withdrawn: one line an admin reads in a warning, on pages, feeds and update checks. */
export const WithdrawReason = z
  .string()
  .min(1, { error: 'must be 1 to 500 characters' })
  .max(500, { error: 'must be 1 to 500 characters' })
  .superRefine(refuseForbiddenText());

/** Issue 29: a version pulled from every latest, resolve and update-check answer; still downloadable by its id. */
export const Withdrawal = z
  .strictObject({
    reason: WithdrawReason,
    at: IsoTimestamp,
    by: LineText(64),
  })
  .meta({
    id: 'Withdrawal',
    description:
      'Present when the version was withdrawn: why, when and by whom. A withdrawn version is never latest, resolved or offered by an update check; its download carries Deprecation and a Link to its successor',
  });
export type Withdrawal = z.infer<typeof Withdrawal>;

/** Issue 31: a plugin name as a descriptor declares it (Bukkit's rule for `name`, bounded): its own or a dependency's. */
export const DeclaredPluginName = z
  .string()
  .regex(/^[A-Za-z0-9 _.-]{1,64}$/, { error: 'must be 1 to 64 letters, digits, spaces, _ . or -' });

/** Issue 31: the plugins a descriptor names as dependencies. */
export const DeclaredNames = z.array(DeclaredPluginName).max(100, { error: 'must name at most 100 plugins' });

/** Issue 31: `api-version` as declared (`1.21`, `1.20.6`). */
export const DeclaredApiVersion = z
  .string()
  .regex(/^[A-Za-z0-9._+-]{1,32}$/, { error: 'must be a version of 1 to 32 letters, digits, . _ + or -' });

/** Issue 31: what a release's JAR declares in its descriptor, read at release; absent when it declares nothing of it. */
const DECLARED_FIELDS = {
  foliaSupported: z.boolean().optional(),
  apiVersion: DeclaredApiVersion.optional(),
  depend: DeclaredNames.optional(),
  softdepend: DeclaredNames.optional(),
  /** Why the descriptor check was skipped (`--no-descriptor-check`): each claim it would have refused. */
  descriptorWarnings: z.array(LineText(500)).min(1).max(16).optional(),
};

/** One file of data/versions/: a released JAR and what it supports. */
export const PluginVersionRecord = z
  .strictObject({
    id: z.string().regex(PLUGIN_VERSION_ID, { error: 'must look like plugin-<digits>-<alphanumerics>' }),
    serverSoftware: z
      .array(ServerSoftwareName)
      .min(1)
      .refine((names) => new Set(names).size === names.length, { error: 'lists a server software twice' }),
    pluginVersion: SemVer,
    javaVersion: JavaVersion,
    /** Issue 39: the highest class-file major version of the JAR's classes, read at release; absent without classes. */
    classFileVersion: z.int().min(45).max(0xffff).optional(),
    minecraftVersion: NameText(32).optional(),
    minecraftVersions: MinecraftRanges.optional(),
    proxyVersion: NameText(32).nullable().optional(),
    // No path separators, and no C0/C1 control characters: the name goes into Content-Disposition and logs.
    // Nor format characters or `]]>` (the character rule): it reaches feeds, pages and nginx.conf too.
    fileName: z
      .string()
      .regex(/^[^/\\\u0000-\u001f\u007f-\u009f]{1,200}\.jar$/i, {
        error: 'must be a file name ending in .jar, without control characters',
      })
      .superRefine(refuseForbiddenText({ cdata: false })),
    fileSize: z.int().positive(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lowercase hex digits' }),
    createdAt: IsoTimestamp,
    updatedAt: IsoTimestamp,
    createdBy: LineText(64),
    channel: Channel.optional(),
    withdrawn: Withdrawal.optional(),
    ...DECLARED_FIELDS,
  })
  .superRefine(checkMinecraftVersions);
export type PluginVersionRecord = z.infer<typeof PluginVersionRecord>;

/**
 * A record as the catalog (and a tree's catalog.json) holds it: with its JAR's sha512 and its
 * changelog, read from `<id>.md`.
 */
export const CatalogVersion = PluginVersionRecord.extend({
  /** Derived from the JAR by the build (never in data/): the catalog's readers need not read the JAR. */
  sha512: z.string().regex(/^[0-9a-f]{128}$/, { error: 'must be 128 lowercase hex digits' }),
  changelog: ChangelogMarkdown.optional(),
});
export type CatalogVersion = z.infer<typeof CatalogVersion>;

/** SPEC 2.2: a public profile, joined to versions by username. */
export const UserProfile = z.strictObject({
  id: LineText(64),
  username: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'must be 1-64 letters, digits, _ . or -' }),
  image: z
    .url({ protocol: /^https?$/ })
    .superRefine(refuseForbiddenText())
    .optional(),
  nickname: z.string().max(64).superRefine(refuseForbiddenText()).nullable().optional(),
});
export type UserProfile = z.infer<typeof UserProfile>;

export const UserProfiles = z
  .array(UserProfile)
  .refine((users) => new Set(users.map((u) => u.username)).size === users.length, {
    error: 'lists a username twice',
  });

/** SPEC 2.2 on the wire. */
const CreatedByUser = z
  .object({ id: z.string(), username: z.string(), image: z.url().optional(), nickname: z.string().nullable() })
  .meta({ id: 'CreatedByUser' });

/** SPEC 2.1 on the wire, plus sha256, sha512 and downloadUrl. */
export const PluginVersion = z
  .object({
    id: z.string().regex(PLUGIN_VERSION_ID),
    serverSoftware: z.array(z.enum(SERVER_SOFTWARE)),
    pluginVersion: z.string().meta({ description: 'Semantic version', example: '1.4.0' }),
    channel: z.enum(CHANNELS).meta({
      description:
        'Release channel; `release` for records without one. Only `release` versions are latest unless `?channel=` asks for more',
    }),
    javaVersion: z.enum(JAVA_VERSIONS),
    classFileVersion: z.int().optional().meta({
      description:
        "The highest class-file major version of the JAR's classes (65: Java 21), read from its bytes, leaving out multi-release overlays (META-INF/versions/) and module-info.class; javaVersion is never below the Java it means. Absent when the JAR holds no class",
      example: 65,
    }),
    minecraftVersion: z.string().optional(),
    minecraftVersions: MinecraftRanges.optional().meta({
      description:
        'The Minecraft versions this build runs on, as inclusive ranges (`to` may be `1.21.x`: every patch of 1.21); absent: exactly `minecraftVersion`, which holds the highest',
    }),
    proxyVersion: z
      .string()
      .nullable()
      .meta({ description: 'Proxy version for proxy servers; null when not applicable' }),
    fileName: z.string(),
    fileSize: z.int().positive().meta({ description: 'Bytes' }),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .meta({ description: 'SHA-256 of the JAR, lowercase hex; also its ETag' }),
    sha512: z
      .string()
      .regex(/^[0-9a-f]{128}$/)
      .meta({ description: 'SHA-512 of the JAR, lowercase hex (Repr-Digest carries both, in base64)' }),
    downloadUrl: z.string().meta({ description: "Path of this version's download (SPEC 4.3)" }),
    createdAt: z.iso.datetime({ precision: 3 }),
    updatedAt: z.iso.datetime({ precision: 3 }),
    createdBy: z.string(),
    createdByUser: CreatedByUser.optional().meta({
      description: 'In the list and the answer by id only, when the uploader has a public profile',
    }),
    changelog: z.string().optional().meta({
      description: 'Release notes, Markdown as the author wrote them (at most 64 KiB); absent when there are none',
    }),
    withdrawn: Withdrawal.optional(),
    foliaSupported: z.boolean().optional().meta({
      description:
        "As the JAR's descriptor declares `folia-supported` (paper-plugin.yml, else plugin.yml), read at release; absent when it does not say",
    }),
    apiVersion: z.string().optional().meta({
      description:
        "The descriptor's `api-version` (plugin.yml or paper-plugin.yml), read at release; absent when it has none",
      example: '1.21',
    }),
    depend: z.array(z.string()).optional().meta({
      description:
        "Plugins the descriptor requires: plugin.yml's `depend`, paper-plugin.yml's required server dependencies, bungee.yml's `depends`, velocity-plugin.json's non-optional dependencies; absent when none",
    }),
    softdepend: z.array(z.string()).optional().meta({
      description:
        "Plugins the descriptor uses when present: plugin.yml's `softdepend`, paper-plugin.yml's optional server dependencies, bungee.yml's `softDepends`, velocity-plugin.json's optional dependencies; absent when none",
    }),
    descriptorWarnings: z.array(z.string()).optional().meta({
      description:
        "Present when the version was released with the descriptor check overridden: each claim the JAR's descriptor did not back",
    }),
    isLatest: z.partialRecord(z.enum(SERVER_SOFTWARE), z.boolean()).meta({
      description:
        "Per supported software: is this the latest version for that software and this version's Java version (SPEC 2.4), on the release channel: always false for beta and alpha versions",
    }),
  })
  .meta({ id: 'PluginVersion' });
export type PluginVersion = z.infer<typeof PluginVersion>;

/** SPEC 2.5 and 2.6. */
export const VersionList = z
  .object({
    versions: z.array(PluginVersion).meta({ description: 'Newest first' }),
    lastUpdated: z.iso.datetime({ precision: 3 }),
  })
  .meta({ id: 'VersionList' });
export const LatestVersion = z.object({ version: PluginVersion }).meta({ id: 'LatestVersion' });

/** `?channel=` on the latest, download-latest and update-check endpoints. */
export const ChannelQuery = z.object({
  channel: z
    .enum(CHANNELS, { error: `must be one of ${CHANNELS.join(', ')}` })
    .optional()
    .meta({
      description:
        'Which versions may be latest: `release` (the default: releases only), `beta` (beta and release) or `alpha` (all)',
    }),
});

/** Issue 15: what matched, on resolve answers and update checks. */
const ResolvedFrom = z
  .object({
    software: z.enum(SERVER_SOFTWARE).meta({
      description:
        "Which of the build's softwares matched: the server's own, or one whose plugins it runs (Purpur runs PaperMC's); for a build offered to Folia or CanvasMC because its descriptor says folia-supported, the build's first software",
    }),
    java: z.enum(JAVA_VERSIONS).meta({ description: "The build's Java version: at most the server's" }),
  })
  .meta({ description: 'What matched; `version.isLatest` keeps its SPEC 2.4 meaning' });

/** Issue 31: a Spigot or Bukkit build past Paper's hard fork, offered to Paper or a fork of it. */
const Compatibility = z.literal('unverified').optional().meta({
  description:
    "Present only when the build is a Spigot or Bukkit build for Minecraft after 1.21.4 (the server's `?minecraft=`, else the build's highest version) offered to PaperMC, Purpur or LeafMC: Paper hard-forked from Spigot at 1.21.4, so it is not promised to run",
});

/** Issue 31: the server's software was ended by its makers. */
const EndOfLife = z
  .object({
    since: z.string().meta({ description: 'Year and month the makers ended it', example: '2024-03' }),
    successor: z.enum(SERVER_SOFTWARE).meta({ description: 'The software its makers point to' }),
    url: z.url().meta({ description: "The successor's page" }),
  })
  .optional()
  .meta({ description: "Present only when the server's software reached end of life (Waterfall): where to go" });

/** Issue 31: why a newer build is not offered: what the server would need. */
export const NewerElsewhere = z
  .object({
    version: z.string().meta({ description: 'A plugin version newer than `latest`', example: '1.5.0' }),
    needs: z
      .object({
        java: z.enum(JAVA_VERSIONS).optional().meta({ description: 'The newer Java version its build needs' }),
        minecraft: z.string().optional().meta({
          description: "The Minecraft versions its build runs on (not the server's `?minecraft=`)",
          example: '1.21.x',
        }),
        software: z.array(z.enum(SERVER_SOFTWARE)).optional().meta({
          description:
            "Its build's softwares, when the server's chain does not take that build, or ranks it after the build offered",
        }),
      })
      .meta({ description: 'Each key present when that is what stands in the way' }),
  })
  .meta({ id: 'NewerElsewhere' });

export const UPDATE_STATUSES = ['latest', 'outdated', 'ahead', 'unknown'] as const;

/** The version a plugin reports in an update check: anything, since dev builds report what they like. */
export const CurrentVersion = z.string().max(64, { error: 'must be a version of at most 64 characters' }).meta({
  description:
    'The version the plugin runs, as it reports it. A semantic version is compared; anything else (`dev`, `1.4`, `v1.4.0`) answers status `unknown`',
  example: '1.3.0',
});

/** The answer of an update check: one cheap, cacheable request a plugin sends at start. */
export const UpdateCheck = z
  .object({
    status: z.enum(UPDATE_STATUSES).meta({
      description:
        '`latest`: current is the latest version (same semantic version); `outdated`: older than the latest; `ahead`: newer than the latest (a dev build or a version of a channel not asked for); `unknown`: current is not a semantic version, so it cannot be compared',
    }),
    current: z.string().meta({ description: 'The version asked about, as sent' }),
    latest: PluginVersion,
    behind: z.int().nonnegative().nullable().meta({
      description:
        'How many released versions (distinct plugin versions of the channel, for this software and Java version) are newer than current, up to the latest; 0 when latest or ahead; null when unknown',
    }),
    withdrawn: z
      .object({ reason: z.string().meta({ description: 'Why it was withdrawn, one line for admins to read' }) })
      .optional()
      .meta({
        description:
          'Present when every build of current for this software and Java version was withdrawn (issue 29): the server runs a version the author pulled, and should move to `moveTo`',
      }),
    moveTo: PluginVersion.optional().meta({
      description:
        'With `withdrawn` only: the version to move to, the newest compatible one not withdrawn for this software, Java version and channel (the same as `latest`, named even when older than current)',
    }),
    resolvedFrom: ResolvedFrom,
    compatibility: Compatibility,
    endOfLife: EndOfLife,
    newerElsewhere: z.array(NewerElsewhere).optional().meta({
      description:
        'Present only when the depot holds plugin versions newer than `latest` that this server is not offered: each with what it needs (another Java, Minecraft version or software), newest first',
    }),
  })
  .meta({
    id: 'UpdateCheck',
    description:
      'Where the version a plugin runs stands; `latest` is the version the latest endpoint answers for the same software, Java version and channel',
  });
export type UpdateCheck = z.infer<typeof UpdateCheck>;

/** The software and, on the routes that name one, the Java version a path names (404 for one that does not exist). */
export const SoftwarePath = z.object({ software: ServerSoftwareName, java: JavaVersion.optional() });

/** `:current` of the update check, the version the plugin runs (400 when too long). */
export const UpdateCheckPath = z.object({ current: CurrentVersion });

/** Issue 15: `?minecraft=` on the list. */
export const ListQuery = z.object({ minecraft: MinecraftVersion.optional() });

/** Issue 15: `?minecraft=` and `?channel=` on the resolve endpoints. */
export const ResolveQuery = ChannelQuery.extend({ minecraft: MinecraftVersion.optional() });

/** Issue 15: the best build for a server, and what matched. */
export const ResolvedVersion = z
  .object({ version: PluginVersion, resolvedFrom: ResolvedFrom, compatibility: Compatibility, endOfLife: EndOfLife })
  .meta({ id: 'ResolvedVersion' });
