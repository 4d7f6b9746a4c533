import { randomBytes, timingSafeEqual } from 'node:crypto';
import { HTTPError, type H3Event } from 'h3';
import { sha256Hex } from '../helpers/digest.ts';

/**
 * A new secret, shown once: a prefix naming its kind and 32 random bytes (base64url, 43 characters).
 * dpt_ a user's token (private charts), dpk_ a server's ingest key, dpw_ a webhook's signing
 * secret, dpp_ a publishing token; each is refused where another kind is expected.
 */
export function newSecret(prefix: 'dpt' | 'dpk' | 'dpw' | 'dpp'): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** Secrets are stored only as this digest (they are random, so no slow hash is needed). */
export function hashSecret(secret: string): string {
  return sha256Hex(secret);
}

/** Constant-time comparison of a presented secret with a stored digest. */
export function secretMatches(storedHash: string, secret: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === presented.length && timingSafeEqual(stored, presented);
}

/** The `Authorization: Bearer <secret>` credential, or null. */
export function bearerToken(event: H3Event): string | null {
  const header = event.req.headers.get('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match ? match[1]! : null;
}

export function forbidden(message: string): HTTPError {
  return new HTTPError({ status: 403, message, headers: { 'cache-control': 'private, no-store' } });
}

export function unauthorized(message: string): HTTPError {
  return new HTTPError({
    status: 401,
    message,
    headers: { 'www-authenticate': 'Bearer', 'cache-control': 'no-store' },
  });
}
