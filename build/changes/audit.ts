import { userInfo } from 'node:os';
import { Actor, type AuditAction, type AuditRecord } from '../../server/audit/schema.ts';
import { auditStore } from '../../server/audit/store.ts';
import type { Config } from '../../server/config.ts';
import type { StateStore } from '../../server/storage.ts';
import { RefusedError } from './refused.ts';
import { withState } from './state.ts';

/** A change as its command knows it; the time is added when it is recorded. */
export type Change = {
  action: AuditAction;
  /** The version id, username, server id or webhook id. */
  target: string;
  actor: string;
  /** The publishing token it came with: set by the publishing API alone. */
  tokenId?: string | undefined;
  /** Plain JSON (undefined fields are left out): never a token, secret, ingest key or a URL's credentials. */
  changes: Record<string, unknown>;
};

/**
 * Who makes a change: `--by <name>` (checked: a refusal names `--by`), else the operating-system
 * user. The publishing token a change came with is the record's `tokenId`, never part of this text.
 */
export function actorOf(by: string | undefined): string {
  if (by !== undefined) {
    const parsed = Actor.safeParse(by);
    if (!parsed.success) throw new RefusedError(`--by: ${parsed.error.issues[0]!.message}`);
    return parsed.data;
  }
  try {
    const { username } = userInfo();
    if (Actor.safeParse(username).success) return username;
  } catch {
    // No passwd entry for this uid (a container): named by its uid below.
  }
  return `uid ${process.getuid?.() ?? 'unknown'}`;
}

/** Appends the record of `change`, made now, to the audit log in `state`; throws when it cannot be stored. */
function recordChange(state: StateStore, change: Change, now: Date = new Date()): Promise<void> {
  const changes = JSON.parse(JSON.stringify(change.changes)) as AuditRecord['changes'];
  return auditStore(state.storage, state.redis).append({ at: now.toISOString(), ...change, changes });
}

/**
 * After a change succeeded, in the state store the command has open: its record in the audit log.
 * A record that cannot be written is said on stderr and the command still succeeds: the change is
 * made and served, and what it printed (a token shown once) must not be lost.
 */
export function recordQuietly(state: StateStore, change: Change): Promise<void> {
  return recordChange(state, change).catch((error: unknown) => sayNotRecorded(change, error));
}

/** recordQuietly for a command that holds no state store open (its change was a build). */
export async function auditChange(config: Pick<Config, 'storageDir' | 'redisUrl'>, change: Change): Promise<void> {
  await withState(config, (state) => recordQuietly(state, change)).catch((error: unknown) =>
    sayNotRecorded(change, error),
  );
}

function sayNotRecorded(change: Change, error: unknown) {
  console.error(
    `[audit] ${change.action} ${change.target} is made, but its audit record could not be written: ${(error as Error).message}`,
  );
}

/** What the audit log adds to a change made with a publishing token: the scopes the token had. */
export const auditedScopes = (request: { tokenScopes?: readonly string[] | undefined }) =>
  request.tokenScopes ? { tokenScopes: [...request.tokenScopes] } : {};
