import { z } from 'zod';
import { refuseForbiddenText } from '../free-text.ts';
import { PublishTokenId } from '../publish-tokens/schema.ts';

/**
 * What the audit log records: every change of what the depot serves or who may use it (issue 29
 * item 6), as `<noun> <verb>` for accounts and webhooks, a version's verb for versions.
 */
const AUDIT_ACTIONS = [
  'release',
  'withdraw',
  'restore',
  'edit',
  'user add',
  'user remove',
  'server add',
  'server remove',
  'server token',
  'webhook add',
  'webhook remove',
  'token add',
  'token revoke',
  // AFTER_SWAP failed after a publish (issue 30 item 5): the tree it did not copy, never the command.
  'deploy fail',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who made a change: `--by <name>` (release's rule for createdBy), else the operating-system user. */
export const Actor = z
  .string()
  .min(1, { error: 'must be 1 to 64 characters' })
  .max(64, { error: 'must be 1 to 64 characters' })
  .superRefine(refuseForbiddenText());

/**
 * What changed, as plain JSON: field names and their new values (for a removal, what was removed).
 * Never a token, a secret, an ingest key or a URL's credentials: callers pass what may be shown.
 */
const Changes = z.record(z.string(), z.json());

/** One record of the audit log, as appended and as parsed again when read. */
export const AuditRecord = z.strictObject({
  at: z.iso.datetime(),
  action: z.enum(AUDIT_ACTIONS),
  /** The version id, username, server id, webhook id or publishing token id changed. */
  target: z.string().min(1).max(200),
  /** `--by`, the OS user, or a publishing token's user (records before issue 42: `<user> (token <id>)`). */
  actor: z.string().min(1).max(100).superRefine(refuseForbiddenText()),
  /**
   * The publishing token a change came with (the API's changes only): a field of its own, so that
   * no `--by` text can read as a token's record.
   */
  tokenId: PublishTokenId.optional(),
  changes: Changes,
});
export type AuditRecord = z.infer<typeof AuditRecord>;
