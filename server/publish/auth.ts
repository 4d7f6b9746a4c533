import { HTTPError, type H3Event } from 'h3';
import { bearerToken, hashSecret, secretMatches, unauthorized } from '../http/auth.ts';
import type { PublishTokenStore } from '../publish-tokens/store/contract.ts';
import { LAST_USED_EVERY_MS, PUBLISH_TOKEN, scopesOf, type PublishScope } from '../publish-tokens/schema.ts';

/**
 * Who a publishing request acts as: the token's user (its records' createdBy), the token's id (the
 * audit log's), what it may do, and whether it changes versions other users released.
 */
export type Publisher = { username: string; tokenId: string; scopes: PublishScope[]; anyVersion: boolean };

/**
 * Issue 30 item 4: one wording for a missing, unknown, expired or revoked token (and for a user
 * token or an ingest key), so an answer never tells a caller which of them it holds.
 */
const PUBLISH_UNAUTHORIZED =
  'A publishing token is required: send Authorization: Bearer <token> with a token from `depot token add`';

/** Query parameters that carry a credential by their name, whatever their value. */
const CREDENTIAL_PARAMETERS = new Set(['token', 'access_token']);

/**
 * The publisher a request's `Authorization: Bearer dpp_...` names: 401 (one wording) unless the
 * token is known, unexpired and not revoked; 400 when a token is in the query string (header or
 * not). lastUsedAt is written at most once a minute per token.
 */
export async function authenticatePublisher(store: PublishTokenStore, event: H3Event, now: number): Promise<Publisher> {
  refuseTokenInQuery(event.url.searchParams);
  const token = bearerToken(event);
  // Another kind of secret (dpt_, dpk_) is never looked up: it cannot be a publishing token.
  const record = token !== null && PUBLISH_TOKEN.test(token) ? await store.find(hashSecret(token)) : null;
  if (record === null || !secretMatches(record.tokenHash, token!)) throw unauthorized(PUBLISH_UNAUTHORIZED);
  if (record.expiresAt !== null && Date.parse(record.expiresAt) <= now) throw unauthorized(PUBLISH_UNAUTHORIZED);
  if (record.lastUsedAt === null || now - Date.parse(record.lastUsedAt) >= LAST_USED_EVERY_MS)
    // A figure for `depot token list`: a store that cannot take it now must not fail the publish.
    await store.markUsed(record.tokenHash, now).catch(() => {});
  return {
    username: record.username,
    tokenId: record.id,
    scopes: scopesOf(record),
    anyVersion: record.anyVersion === true,
  };
}

/**
 * A token in a URL is in access logs, proxies' logs and browser history: refused (400) even when
 * the header carries one too, and the answer never repeats what was sent.
 */
function refuseTokenInQuery(query: URLSearchParams): void {
  for (const [name, value] of query) {
    if (!CREDENTIAL_PARAMETERS.has(name.toLowerCase()) && !name.startsWith('dpp_') && !value.startsWith('dpp_'))
      continue;
    throw new HTTPError({
      status: 400,
      message:
        'A token in the query string is refused: send it in the Authorization header (Authorization: Bearer <token>); a token sent in a URL may have been logged on the way, so revoke it (depot token revoke <id>) and add another',
      headers: { 'cache-control': 'no-store' },
    });
  }
}

/** 403 unless the token has `scope`, naming it and how to make a token that has it. */
export function requireScope(publisher: Publisher, scope: PublishScope): void {
  if (publisher.scopes.includes(scope)) return;
  throw new HTTPError({
    status: 403,
    message: `This token lacks the scope "${scope}" (it has ${publisher.scopes.join(', ')}); an operator makes one that has it with depot token add ${publisher.username} --scopes ${[...publisher.scopes, scope].join(',')}`,
    data: { scope },
  });
}
