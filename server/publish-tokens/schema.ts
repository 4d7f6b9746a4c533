import { z } from 'zod';
import { refuseForbiddenText } from '../free-text.ts';

/** A token's public name, shown by `depot token list` and named by `depot token revoke`. */
export const PublishTokenId = z
  .string()
  .regex(/^tok_[0-9a-f]{12}$/, { error: 'must be a token id such as tok_0123456789ab' });

/** The secret itself: `dpp_` (secret scanners match it) and 32 random bytes in base64url (newSecret). */
export const PUBLISH_TOKEN = /^dpp_[A-Za-z0-9_-]{43}$/;

/** What a token is called by its operator (`--name ci`): one line of text. */
export const PublishTokenName = z
  .string()
  .min(1, { error: 'must be 1 to 64 characters' })
  .max(64, { error: 'must be 1 to 64 characters' })
  .superRefine(refuseForbiddenText());

/** A publishing token as stored: its sha256 digest only, never the token (DESIGN: secrets are stored hashed). */
export const PublishTokenRecord = z.strictObject({
  id: PublishTokenId,
  /** The user it acts as: what it publishes carries this `createdBy`. */
  username: z.string().min(1),
  name: PublishTokenName.nullable(),
  createdAt: z.iso.datetime(),
  /** Null: never expires (`--expires never`). */
  expiresAt: z.iso.datetime().nullable(),
  lastUsedAt: z.iso.datetime().nullable(),
  tokenHash: z.string().regex(/^[0-9a-f]{64}$/),
});
export type PublishTokenRecord = z.infer<typeof PublishTokenRecord>;

/**
 * lastUsedAt is written at most this often per token: a write on every publishing request would
 * put a lock (files) or a script (Redis) on the request's path for a figure shown to the minute.
 */
export const LAST_USED_EVERY_MS = 60_000;

/** The storage key of a token's record: its digest, so a request finds it with one read. */
export const publishTokenKey = (tokenHash: string) => `publish-tokens:${tokenHash}`;
