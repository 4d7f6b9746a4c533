import { z } from 'zod';
import { Channel, JavaVersion, WithdrawReason } from '../versions/schema.ts';
import { MinecraftOption, ProxyOption } from './change-requests.ts';

/**
 * `PATCH /api/plugin-versions/<id>` (issue 30 item 3): what `depot edit` changes, and `withdrawn`:
 * `{reason}` withdraws, `null` restores. What the JAR fixes is not a field here: an unknown field is refused.
 */
export const PublishPatch = z
  .strictObject({
    channel: Channel.optional(),
    changelog: z.string().min(1).optional(),
    minecraftVersions: z
      .string()
      .optional()
      .superRefine((text, ctx) => {
        if (text === undefined) return;
        const parsed = MinecraftOption.safeParse(text);
        if (!parsed.success)
          for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message });
      }),
    proxyVersion: ProxyOption.optional(),
    // Issue 39: `depot edit --java`: raised only, to at least what the JAR's classes need.
    javaVersion: z
      .preprocess((value) => (typeof value === 'number' ? String(value) : value), JavaVersion)
      .optional()
      .meta({ description: "Raised only, and to at least the Java the JAR's classes need (classFileVersion)" }),
    withdrawn: z.strictObject({ reason: WithdrawReason }).nullable().optional(),
  })
  .refine((patch) => Object.keys(patch).length > 0, {
    error: 'nothing to change: give channel, changelog, minecraftVersions, proxyVersion, javaVersion or withdrawn',
  })
  .meta({ id: 'PublishPatch' });
export type PublishPatch = z.infer<typeof PublishPatch>;
