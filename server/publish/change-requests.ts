import { z } from 'zod';
import { Actor } from '../audit/schema.ts';
import { PublishScope, PublishTokenId } from '../publish-tokens/schema.ts';
import {
  Channel,
  JavaVersion,
  MinecraftRanges,
  PLUGIN_VERSION_ID,
  SemVer,
  ServerSoftwareName,
  WithdrawReason,
} from '../versions/schema.ts';
import { SERVER_SOFTWARE } from '../versions/software.ts';
import { ProxyOption } from './metadata.ts';

/**
 * Issue 41: the changes the depot makes (build/changes/) as typed requests, the same for both
 * doors: the CLI turns its flags into them, the publishing API its metadata, and its build worker
 * checks each again as it arrives. A field added here is one the compiler follows to both doors.
 */

/** Who asks: the record's createdBy or withdrawn.by (`operator` when absent), and the token it came with and its scopes. */
const Requester = {
  by: Actor.optional(),
  tokenId: PublishTokenId.optional(),
  tokenScopes: z.array(PublishScope).optional(),
};

/** `--minecraft` or `minecraftVersions`, parsed: ranges, or one name kept as written (a snapshot of before 26.1). */
const Minecraft = z.union([z.string().min(1).max(32), MinecraftRanges]);

/** A changelog: a Markdown file's path (the CLI's --changelog), or the Markdown itself (the API's). */
const Changelog = z.union([z.string().min(1), z.strictObject({ markdown: z.string() })]);

export const ReleaseRequest = z.strictObject({
  ...Requester,
  /** The JAR: a file the depot reads (the CLI's argument, or the API's upload). */
  file: z.string().min(1),
  /** The name the JAR is stored and served under (the API's upload's); absent, the file's own. */
  fileName: z.string().min(1).max(255).optional(),
  version: SemVer,
  /** Absent (issue 39): the smallest listed Java that loads the JAR's classes. */
  java: JavaVersion.optional(),
  software: z.array(ServerSoftwareName).min(1).max(SERVER_SOFTWARE.length),
  minecraft: Minecraft.optional(),
  proxy: ProxyOption.optional(),
  /** Absent: a release. */
  channel: Channel.optional(),
  changelog: Changelog.optional(),
  /** Issue 31: release even when the JAR's descriptors do not back `software`. */
  noDescriptorCheck: z.boolean().optional(),
  /** Asked through the API's metadata: refusals name its fields. */
  metadata: z.boolean().optional(),
});
export type ReleaseRequest = z.infer<typeof ReleaseRequest>;

/**
 * A change of a released version, checked whole before anything is written and written as one
 * change: what the JAR does not fix (an edit), and its withdrawal (`{reason}`) or restoring (`null`).
 */
export const ReviseRequest = z.strictObject({
  ...Requester,
  id: z.string().regex(PLUGIN_VERSION_ID),
  channel: Channel.optional(),
  changelog: Changelog.optional(),
  minecraft: Minecraft.optional(),
  proxy: ProxyOption.optional(),
  /** Issue 39: raised only, and never below what the JAR's classes need. */
  java: JavaVersion.optional(),
  withdrawn: z.strictObject({ reason: WithdrawReason }).nullable().optional(),
});
export type ReviseRequest = z.infer<typeof ReviseRequest>;
