import { parseArgs } from 'node:util';
import { z } from 'zod';
import { Actor } from '../../server/audit/schema.ts';
import type { ReleaseRequest } from '../../server/publish/change-requests.ts';
import { MinecraftOption, ProxyOption } from '../../server/publish/change-requests.ts';
import { Channel, JavaVersion, SemVer, ServerSoftwareName } from '../../server/versions/schema.ts';
import { RefusedError } from '../changes/refused.ts';

/** `depot release`'s flags, checked, as the release's typed request (build/changes/release.ts). */
const ReleaseOptions = z.object({
  file: z.string({
    error: 'missing the JAR file: depot release <file.jar> --version X.Y.Z --java 21 --software PaperMC',
  }),
  version: SemVer,
  /** Absent (issue 39): the smallest listed Java that loads the JAR's classes. */
  java: JavaVersion.optional(),
  software: z
    .string({ error: 'missing --software, e.g. --software PaperMC,Folia' })
    .transform((list) =>
      list
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    )
    .pipe(z.array(ServerSoftwareName).min(1)),
  minecraft: MinecraftOption.optional(),
  proxy: ProxyOption.optional(),
  /** createdBy (`operator` when absent) and the audit log's actor (the OS user when absent). */
  by: Actor.optional(),
  /** A Markdown file, stored as data/versions/<id>.md. */
  changelog: z.string().min(1).optional(),
  /** Absent: a release. */
  channel: Channel.optional(),
  /** `--no-descriptor-check` (issue 31): release even when the JAR's descriptors do not back --software. */
  noDescriptorCheck: z.boolean().optional(),
});

export function parseReleaseArgs(args: string[]): ReleaseRequest {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      version: { type: 'string' },
      java: { type: 'string' },
      software: { type: 'string' },
      minecraft: { type: 'string' },
      proxy: { type: 'string' },
      by: { type: 'string' },
      changelog: { type: 'string' },
      channel: { type: 'string' },
      'no-descriptor-check': { type: 'boolean' },
    },
  });
  const { 'no-descriptor-check': noDescriptorCheck, ...rest } = values;
  const parsed = ReleaseOptions.safeParse({ ...rest, noDescriptorCheck, file: positionals[0] });
  if (!parsed.success) throw optionsRefused(parsed.error.issues, 'file');
  return parsed.data;
}

/** A command's options refused: each issue as `--<option>: <message>`, the positional's as its message alone. */
export function optionsRefused(issues: readonly z.core.$ZodIssue[], positional: string): RefusedError {
  const reasons = issues.map((issue) => {
    const option = String(issue.path[0] ?? '');
    return option === positional ? issue.message : `--${option}: ${issue.message}`;
  });
  return new RefusedError(reasons.join('; '));
}
