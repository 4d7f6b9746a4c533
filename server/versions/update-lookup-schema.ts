import { z } from 'zod';
import { CHANNELS } from './channels.ts';
import { MINECRAFT_NAME } from './minecraft.ts';
import { LOADER_NAMES, softwareOfLoader } from './modrinth-loaders.ts';
import { HASH_ALGORITHMS } from './paths.ts';

/**
 * Issue 31: Modrinth's hash-based update lookup (`POST /v2/version_files/update`), its request
 * and its answer as this depot gives them. Field names are Modrinth's (snake_case), since its
 * clients send and read them as they are.
 */

/** How many hashes one lookup may name: a server's plugins folder, many times over. */
export const MAX_LOOKUP_HASHES = 1000;
/** Hex digits of each algorithm we hold (Modrinth's sha1 is not one: data/ never had it). */
export const HEX_DIGITS = { sha256: 64, sha512: 128 } as const;

const hex = (algorithm: keyof typeof HEX_DIGITS) => new RegExp(`^[0-9a-fA-F]{${HEX_DIGITS[algorithm]}}$`);

export const UpdateLookupBody = z
  .object({
    hashes: z
      .array(z.string({ error: 'must be a string of hex digits' }).max(HEX_DIGITS.sha512, { error: 'is too long' }), {
        error: 'must be an array of hex digests',
      })
      .max(MAX_LOOKUP_HASHES, { error: `must hold at most ${MAX_LOOKUP_HASHES} hashes` })
      .meta({ description: "The JARs' digests, hex in any letter case; each answer is keyed by the hash as sent" }),
    algorithm: z
      .enum(HASH_ALGORITHMS, {
        error: `must be one of ${HASH_ALGORITHMS.join(', ')} (the digests this depot holds; Modrinth's sha512 works with both)`,
      })
      .meta({ description: 'The digest algorithm of `hashes`' }),
    loaders: z
      .array(
        z.string({ error: 'must be a string' }).refine((name) => softwareOfLoader(name) !== undefined, {
          error: `must be one of ${LOADER_NAMES.join(', ')} (any letter case)`,
        }),
        { error: 'must be an array of loader names' },
      )
      .max(32, { error: 'must hold at most 32 loaders' })
      .optional()
      .meta({
        description:
          "The server's software as Modrinth loaders, the server's own first (its chain of compatible softwares follows); empty or absent: the softwares of the version each hash names",
      }),
    game_versions: z
      .array(
        z.string({ error: 'must be a string' }).regex(MINECRAFT_NAME, {
          error: 'must be a Minecraft version such as 1.21.4, 1.21, 26.1.1 or 26.2-snapshot-1',
        }),
        { error: 'must be an array of Minecraft versions' },
      )
      .max(64, { error: 'must hold at most 64 versions' })
      .optional()
      .meta({
        description:
          "Minecraft versions the server may run (releases such as 1.21.4 or 26.1.1, or a 26.x pre-release such as 26.2-snapshot-1, which only builds naming it support): a build supporting any of them qualifies, on Java up to the higher of the hash's JAR's and the least every server of that version runs (docs/api.md: Minecraft's Java; 25 for 26.1); empty or absent: any, on the JAR's Java",
      }),
    version_types: z
      .array(z.enum(CHANNELS, { error: `must be one of ${CHANNELS.join(', ')}` }), {
        error: 'must be an array of version types',
      })
      .max(3, { error: 'must hold at most 3 version types' })
      .optional()
      .meta({
        description:
          'Which channels may be offered: the least stable listed and every more stable one; absent: the channel of the version each hash names (a release is offered releases)',
      }),
  })
  .superRefine((body, ctx) => {
    const shape = hex(body.algorithm);
    body.hashes.forEach((hash, i) => {
      if (!shape.test(hash))
        ctx.addIssue({
          code: 'custom',
          message: `must be ${HEX_DIGITS[body.algorithm]} hex digits (a ${body.algorithm} digest)`,
          path: ['hashes', i],
        });
    });
  })
  .meta({ id: 'UpdateLookupRequest' });
export type UpdateLookupBody = z.infer<typeof UpdateLookupBody>;

/** A version object as Modrinth answers it, with the fields its clients read filled from the record. */
export const ModrinthVersion = z
  .object({
    id: z.string().meta({ description: "The version's id" }),
    project_id: z.string().meta({ description: 'This depot\'s one project: always "depot"' }),
    author_id: z.string().meta({ description: 'The uploader (createdBy)' }),
    name: z.string().meta({ description: 'The plugin version, with its channel unless a release' }),
    version_number: z.string().meta({ description: 'The plugin version (pluginVersion)' }),
    version_type: z.enum(CHANNELS).meta({ description: 'The channel' }),
    changelog: z.string().nullable(),
    changelog_url: z.null(),
    dependencies: z.array(z.never()).meta({ description: 'Always empty' }),
    game_versions: z.array(z.string()).meta({
      description: 'minecraftVersion, or each end of minecraftVersions (`1.21.x` as written); empty for a proxy build',
    }),
    loaders: z.array(z.string()).meta({ description: 'The softwares, as Modrinth loaders' }),
    featured: z.boolean(),
    status: z.literal('listed'),
    requested_status: z.null(),
    date_published: z.iso.datetime({ precision: 3 }).meta({ description: 'createdAt' }),
    downloads: z.int().meta({ description: 'Always 0: counts are at /api/downloads' }),
    files: z
      .array(
        z.object({
          hashes: z.object({ sha256: z.string(), sha512: z.string() }),
          url: z.url().meta({ description: "The JAR's absolute URL (its immutable download by id)" }),
          filename: z.string(),
          primary: z.literal(true),
          size: z.int(),
          file_type: z.null(),
        }),
      )
      .meta({ description: 'The one JAR' }),
  })
  .meta({ id: 'ModrinthVersion' });
export type ModrinthVersion = z.infer<typeof ModrinthVersion>;

export const UpdateLookupAnswer = z.record(z.string(), ModrinthVersion).meta({
  id: 'UpdateLookupAnswer',
  description:
    'Each hash as sent -> the newest build for the server; hashes of no JAR of this depot, or with no such build, are left out',
});
