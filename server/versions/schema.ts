import semver from 'semver';
import { z } from 'zod';
import { JAVA_VERSIONS, SERVER_SOFTWARE, findSoftware } from './software.ts';

export const PLUGIN_VERSION_ID = /^plugin-\d+-[A-Za-z0-9]+$/;

export const JavaVersion = z.enum(JAVA_VERSIONS, {
  error: (issue) => `Unknown Java version ${JSON.stringify(issue.input)}; expected one of ${JAVA_VERSIONS.join(', ')}`,
});

/** SPEC 2.3: any letter case in, the canonical spelling out. */
export const ServerSoftwareName = z.string().transform((name, ctx) => {
  const software = findSoftware(name);
  if (!software) {
    ctx.addIssue({
      code: 'custom',
      message: `Unknown server software ${JSON.stringify(name)}; expected one of ${SERVER_SOFTWARE.join(', ')}`,
    });
    return z.NEVER;
  }
  return software;
});

export const SemVer = z
  .string()
  .refine((value) => semver.valid(value) === value, { error: 'must be a semantic version such as 1.4.0' });

const IsoTimestamp = z.iso.datetime({ precision: 3, error: 'must be an ISO 8601 UTC timestamp with milliseconds' });

/** One file of data/versions/: a released JAR and what it supports. */
export const PluginVersionRecord = z.strictObject({
  id: z.string().regex(PLUGIN_VERSION_ID, { error: 'must look like plugin-<digits>-<alphanumerics>' }),
  serverSoftware: z
    .array(ServerSoftwareName)
    .min(1)
    .refine((names) => new Set(names).size === names.length, { error: 'lists a server software twice' }),
  pluginVersion: SemVer,
  javaVersion: JavaVersion,
  minecraftVersion: z.string().min(1).max(32).optional(),
  proxyVersion: z.string().min(1).max(32).nullable().optional(),
  fileName: z.string().regex(/^[^/\\\0]{1,200}\.jar$/i, { error: 'must be a file name ending in .jar' }),
  fileSize: z.int().positive(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lowercase hex digits' }),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  createdBy: z.string().min(1).max(64),
});
export type PluginVersionRecord = z.infer<typeof PluginVersionRecord>;

/** SPEC 2.2: a public profile, joined to versions by username. */
export const UserProfile = z.strictObject({
  id: z.string().min(1).max(64),
  username: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'must be 1-64 letters, digits, _ . or -' }),
  image: z.url({ protocol: /^https?$/ }).optional(),
  nickname: z.string().max(64).nullable().optional(),
});
export type UserProfile = z.infer<typeof UserProfile>;

export const UserProfiles = z
  .array(UserProfile)
  .refine((users) => new Set(users.map((u) => u.username)).size === users.length, {
    error: 'lists a username twice',
  });
