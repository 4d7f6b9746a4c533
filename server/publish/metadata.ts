import { HTTPError } from 'h3';
import { z } from 'zod';
import { Channel, JavaVersion, SemVer, ServerSoftwareName } from '../versions/schema.ts';
import { SERVER_SOFTWARE } from '../versions/software.ts';
import { MinecraftOption, ProxyOption, type ReleaseRequest } from './change-requests.ts';

const text = (example: string) =>
  z.string({ error: (issue) => (issue.input === undefined ? `is required, e.g. ${example}` : 'must be a string') });

const METADATA_FIELDS = {
  pluginVersion: text('"1.4.0"').pipe(SemVer),
  // A number is what a YAML or shell author writes most often: 21 reads as "21". Absent (issue 39):
  // the smallest listed Java that loads the JAR's classes.
  javaVersion: z
    .preprocess((value) => (typeof value === 'number' ? String(value) : value), text('"21"').pipe(JavaVersion))
    .optional(),
  serverSoftware: z
    .array(ServerSoftwareName, {
      error: (issue) =>
        issue.input === undefined
          ? 'is required, e.g. ["PaperMC", "Folia"]'
          : 'must be an array of server software names, e.g. ["PaperMC", "Folia"]',
    })
    .min(1, { error: 'must name at least one server software' })
    .max(SERVER_SOFTWARE.length, { error: `must name at most the ${SERVER_SOFTWARE.length} server softwares` }),
  minecraftVersions: text('"1.20.6-1.21.4"').pipe(MinecraftOption).optional(),
  proxyVersion: text('"3.4"').pipe(ProxyOption).optional(),
  channel: Channel.optional(),
  // Checked where the CLI's --changelog file is (releaseJar): one rule for both.
  changelog: text('"## 1.4.0\\n\\n- Fixes"').optional(),
  // Issue 31: false is the CLI's --no-descriptor-check (what it would have refused is kept in the record).
  descriptorCheck: z.boolean({ error: 'must be true or false' }).optional(),
};

/**
 * The `metadata` part of `POST /api/plugin-versions` (issue 30): `depot release`'s options under the
 * record's field names, turned into the options releaseJar takes, so both go through one path.
 * Unknown fields are refused: a misspelt `minecraftVersion` would otherwise be dropped silently.
 */
export const PublishMetadata = z
  .strictObject(METADATA_FIELDS, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? unknownFields(issue.keys) : 'must be a JSON object'),
  })
  .transform((metadata): Omit<ReleaseRequest, 'file' | 'fileName' | 'by' | 'tokenId'> => ({
    version: metadata.pluginVersion,
    java: metadata.javaVersion,
    software: metadata.serverSoftware,
    minecraft: metadata.minecraftVersions,
    proxy: metadata.proxyVersion,
    channel: metadata.channel,
    changelog: metadata.changelog === undefined ? undefined : { markdown: metadata.changelog },
    noDescriptorCheck: metadata.descriptorCheck === false,
    // Refusals name these fields (a missing javaVersion the JAR's classes cannot stand in for).
    metadata: true,
  }));
export type PublishMetadata = z.output<typeof PublishMetadata>;

function unknownFields(keys: readonly string[]): string {
  const names = keys.map((key) => JSON.stringify(key)).join(', ');
  return `unknown field ${names}; the fields are ${Object.keys(METADATA_FIELDS).join(', ')}`;
}

/**
 * The parsed metadata part, or a 400 naming every bad field (`metadata.javaVersion: Unknown Java
 * version "16"; ...`) with the first one's name as `field`.
 */
export function parsePublishMetadata(value: unknown): PublishMetadata {
  const parsed = PublishMetadata.safeParse(value);
  if (parsed.success) return parsed.data;
  const named = parsed.error.issues.map((issue) => ({
    field: issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join(''),
    message: issue.message,
  }));
  throw new HTTPError({
    status: 400,
    message: named.map(({ field, message }) => `metadata${field}: ${message}`).join('; '),
    data: { field: String(parsed.error.issues[0]!.path[0] ?? 'metadata') },
  });
}
