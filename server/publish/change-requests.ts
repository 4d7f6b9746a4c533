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
import { freeTextProblem, refuseForbiddenText } from '../free-text.ts';
import { isMinecraftListText, parseMinecraftList, type MinecraftRange } from '../versions/minecraft.ts';
import { SERVER_SOFTWARE } from '../versions/software.ts';

/**
 * `--minecraft` and `minecraftVersions` (issue 15): `1.21.4`, `1.20.6-1.21.4`, `1.21.x` or a comma
 * list of them; issue 39: `26.1.1`, `1.21.10-26.1.x` and 26.x pre-releases (`26.2-snapshot-1`) too.
 */
export const MinecraftOption = z
  .string()
  .max(400, { error: 'is longer than 400 characters' })
  .transform((text, ctx): MinecraftRange[] | string => {
    // A snapshot or pre-release name of before 26.1 (24w14a, 1.21.5-pre1) is kept as written, as
    // before ranges: it matches only itself. A 26.x one (26.2-rc-1) is a list item, of the same meaning.
    if (!isMinecraftListText(text)) {
      const problem = freeTextProblem(text, { cdata: false });
      if (problem) {
        ctx.addIssue({ code: 'custom', message: problem });
        return z.NEVER;
      }
      if (text.length <= 32) return text;
      ctx.addIssue({ code: 'custom', message: 'must be a version, a range or a list of them such as 1.20.6-1.21.4' });
      return z.NEVER;
    }
    const ranges = parseMinecraftList(text);
    if (typeof ranges === 'string') {
      ctx.addIssue({ code: 'custom', message: ranges });
      return z.NEVER;
    }
    return ranges;
  });

/** `--proxy` and `proxyVersion`: the proxy version a build is for. */
export const ProxyOption = z
  .string()
  .min(1)
  .max(32)
  .superRefine(refuseForbiddenText({ cdata: false }));

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
