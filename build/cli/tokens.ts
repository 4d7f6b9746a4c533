import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { Config } from '../../server/config.ts';
import { DAY, parseDuration } from '../../server/helpers/duration.ts';
import { hashSecret, newSecret } from '../../server/http/auth.ts';
import {
  PUBLISH_SCOPES,
  PublishScope,
  PublishTokenId,
  PublishTokenName,
  scopesOf,
  type PublishTokenRecord,
} from '../../server/publish-tokens/schema.ts';
import { publishTokenStore } from '../../server/publish-tokens/store.ts';
import { actorOf, recordQuietly } from '../changes/audit.ts';
import { RefusedError } from '../changes/refused.ts';
import { requireUser } from './accounts.ts';
import { withState } from '../changes/state.ts';

/** A token lives 90 days unless `--expires` says otherwise: a leaked CI secret stops working by itself. */
const DEFAULT_EXPIRES = '90d';
/** The longest `--expires` short of `never`: ten years. */
const MAX_EXPIRES_MS = 3650 * DAY;

const ADD_USAGE =
  'depot token add <username> [--name ci] [--expires 90d|never] [--scopes publish,edit,withdraw] [--any-version] [--by alice]';

/** `--expires`: a duration from now (90d by default), or `never`; null means no expiry. */
function expiresAt(text: string, now: Date): string | null {
  if (text === 'never') return null;
  const ms = parseDuration(text);
  if (ms === undefined || ms > MAX_EXPIRES_MS)
    throw new RefusedError('--expires: must be a duration such as 90d, 12h or 30m (at most 3650d), or never');
  return new Date(now.getTime() + ms).toISOString();
}

/** `--scopes`: a comma list of publish, edit and withdraw; `publish` (POST only) when absent. */
function parseScopes(text: string | undefined): PublishScope[] {
  if (text === undefined) return ['publish'];
  const names = text.split(',').map((name) => name.trim());
  const parsed = z.array(PublishScope).min(1).safeParse(names);
  if (!parsed.success)
    throw new RefusedError(
      `--scopes: must be a comma list of ${PUBLISH_SCOPES.join(', ')}, e.g. --scopes publish,edit`,
    );
  return PUBLISH_SCOPES.filter((scope) => parsed.data.includes(scope));
}

/**
 * What `token list` and `token revoke` show of a token: never the token or its digest; its scopes
 * (a token made before scopes is said to keep what it could do).
 */
const shown = ({ tokenHash: _digest, scopes, anyVersion, ...record }: PublishTokenRecord) => ({
  ...record,
  scopes: scopesOf({ scopes }),
  anyVersion: anyVersion === true,
  ...(scopes === undefined
    ? { scopesNote: "made before scopes: it keeps publish, edit and withdraw on its user's versions" }
    : {}),
});

/**
 * `token add <username> [--name ci] [--expires 90d] [--by alice]`: a publishing token acting as
 * the user, printed once; only its digest is stored.
 */
export async function addToken(args: string[], config: Config, now: Date) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      expires: { type: 'string' },
      scopes: { type: 'string' },
      'any-version': { type: 'boolean' },
      by: { type: 'string' },
    },
  });
  const actor = actorOf(values.by);
  const scopes = parseScopes(values.scopes);
  const anyVersion = values['any-version'] === true;
  const [username, extra] = positionals;
  if (username === undefined) throw new RefusedError(`missing the username: ${ADD_USAGE}`);
  if (extra !== undefined) throw new RefusedError(`one username only: ${ADD_USAGE}`);
  const name = values.name === undefined ? null : PublishTokenName.safeParse(values.name);
  if (name && !name.success) throw new RefusedError(`--name: ${name.error.issues[0]!.message}`);
  const expires = expiresAt(values.expires ?? DEFAULT_EXPIRES, now);
  await requireUser(config.dataDir, username);
  const token = newSecret('dpp');
  const record: PublishTokenRecord = {
    id: `tok_${randomBytes(6).toString('hex')}`,
    username,
    name: name ? name.data : null,
    createdAt: now.toISOString(),
    expiresAt: expires,
    lastUsedAt: null,
    tokenHash: hashSecret(token),
    scopes,
    anyVersion,
  };
  await withState(config, async (state) => {
    await publishTokenStore(state.storage, state.redis).add(record);
    // The record names the token by its id, never by the token or its digest.
    const changes = { username, name: record.name, expiresAt: expires, scopes, anyVersion };
    await recordQuietly(state, { action: 'token add', target: record.id, actor, changes });
  });
  return { id: record.id, username, name: record.name, expiresAt: expires, scopes, anyVersion, token };
}

/** `token list`: every publishing token, oldest first, with when it expires and was last used. */
export async function listTokens(args: string[], config: Config) {
  parseArgs({ args, options: {} });
  const records = await withState(config, (state) => publishTokenStore(state.storage, state.redis).list());
  return { tokens: records.map(shown) };
}

/** `token revoke <id> [--by alice]`: deleted, so the next request with it is refused on every origin. */
export async function revokeToken(args: string[], config: Config) {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { by: { type: 'string' } } });
  const actor = actorOf(values.by);
  if (positionals[0] === undefined)
    throw new RefusedError('missing the token id: depot token revoke <id> [--by alice]');
  const id = PublishTokenId.safeParse(positionals[0]);
  if (!id.success) throw new RefusedError(`id ${id.error.issues[0]!.message}`);
  return withState(config, async (state) => {
    const record = await publishTokenStore(state.storage, state.redis).revoke(id.data);
    if (!record) throw new RefusedError(`no token with id ${id.data}; see them with: depot token list`);
    const changes = { username: record.username, name: record.name };
    await recordQuietly(state, { action: 'token revoke', target: record.id, actor, changes });
    return { ...shown(record), revoked: true };
  });
}

/** `token add|list|revoke`; null for another verb (depot.ts prints the usage). */
export function runTokenCommand(args: string[], config: Config): Promise<object> | null {
  const [verb, ...rest] = args;
  if (verb === 'add') return addToken(rest, config, new Date());
  if (verb === 'list') return listTokens(rest, config);
  if (verb === 'revoke') return revokeToken(rest, config);
  return null;
}
