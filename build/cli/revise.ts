import { parseArgs } from 'node:util';
import { z } from 'zod';
import { Actor } from '../../server/audit/schema.ts';
import type { Config } from '../../server/config.ts';
import { MinecraftOption, ProxyOption } from '../../server/publish/change-requests.ts';
import { Channel, JavaVersion, PLUGIN_VERSION_ID, WithdrawReason } from '../../server/versions/schema.ts';
import { revise } from '../changes/revise.ts';
import { ON_STDERR } from '../changes/progress.ts';
import { RefusedError } from '../changes/refused.ts';
import { optionsRefused } from './release.ts';

/** `depot withdraw`, `restore` and `edit`: their flags, checked, as one revision (build/changes/revise.ts). */

const VersionId = z
  .string({ error: 'missing the version id, such as plugin-1780412400000-b878942086' })
  .regex(PLUGIN_VERSION_ID, {
    error: 'must be a version id such as plugin-1780412400000-b878942086 (GET /api/plugin-versions lists them)',
  });

const WithdrawOptions = z.object({
  id: VersionId,
  reason: z
    .string({ error: 'is required: say why, in 1 to 500 characters, e.g. --reason "corrupts worlds on 1.21.4"' })
    .pipe(WithdrawReason),
  by: Actor.optional(),
});

const RestoreOptions = z.object({ id: VersionId, by: Actor.optional() });

/** The fields an edit may change: what does not change the JAR, and (issue 39) its Java, raised only. */
const EditOptions = z.object({
  id: VersionId,
  channel: Channel.optional(),
  java: JavaVersion.optional(),
  changelog: z.string().min(1).optional(),
  minecraft: MinecraftOption.optional(),
  proxy: ProxyOption.optional(),
  by: Actor.optional(),
});

/** What a JAR's bytes fix: an edit refuses them, naming what to do instead. */
const FIXED_BY_THE_JAR = ['version', 'software', 'file', 'file-name', 'size', 'sha256', 'created-at', 'id'];

function parseOptions<T extends z.ZodType>(
  schema: T,
  args: string[],
  options: Record<string, { type: 'string' | 'boolean' }>,
): z.output<T> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options,
  });
  if (positionals.length > 1)
    throw new RefusedError(`one version id at a time; got ${positionals.length}: ${positionals.join(' ')}`);
  const parsed = schema.safeParse({ ...values, id: positionals[0] });
  if (!parsed.success) throw optionsRefused(parsed.error.issues, 'id');
  return parsed.data;
}

/** `withdraw <id> --reason "<text>" [--by alice]`. */
export function withdrawVersion(args: string[], config: Config, now: Date) {
  const { reason, ...options } = parseOptions(WithdrawOptions, args, {
    reason: { type: 'string' },
    by: { type: 'string' },
  });
  return revise({ ...options, withdrawn: { reason } }, config, now, ON_STDERR, 'withdraw');
}

/** `restore <id> [--by alice]`. */
export function restoreVersion(args: string[], config: Config, now: Date) {
  const options = parseOptions(RestoreOptions, args, { by: { type: 'string' } });
  return revise({ ...options, withdrawn: null }, config, now, ON_STDERR, 'restore');
}

/** `edit <id> [--channel C] [--changelog notes.md] [--minecraft RANGE] [--proxy V] [--java N] [--by alice]`. */
export async function editVersion(args: string[], config: Config, now: Date) {
  const fixed = Object.fromEntries(FIXED_BY_THE_JAR.map((name) => [name, { type: 'string' as const }]));
  const options = parseOptions(EditOptions, args, {
    ...fixed,
    channel: { type: 'string' },
    changelog: { type: 'string' },
    minecraft: { type: 'string' },
    proxy: { type: 'string' },
    java: { type: 'string' },
    by: { type: 'string' },
  });
  const asked = FIXED_BY_THE_JAR.find((name) =>
    args.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`)),
  );
  if (asked)
    throw new RefusedError(
      `--${asked}: cannot change: the JAR fixes it; release a new version (and withdraw this one) instead`,
    );
  const asks = [options.channel, options.changelog, options.minecraft, options.proxy, options.java];
  if (asks.every((value) => value === undefined))
    throw new RefusedError('nothing to change: give --channel, --changelog, --minecraft or --proxy');
  return revise(options, config, now, ON_STDERR, 'edit');
}
