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

/**
 * Issue 41: what a token may do, as crates.io's and npm's granular tokens say it: `publish` (POST a
 * release), `edit` (PATCH what the JAR does not fix), `withdraw` (PATCH `withdrawn`, either way).
 */
export const PUBLISH_SCOPES = ['publish', 'edit', 'withdraw'] as const;
export const PublishScope = z.enum(PUBLISH_SCOPES, { error: `must be one of ${PUBLISH_SCOPES.join(', ')}` });
export type PublishScope = z.infer<typeof PublishScope>;

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
  /** Absent: a token made before scopes, which keeps what it could do (scopesOf). */
  scopes: z.array(PublishScope).min(1).max(PUBLISH_SCOPES.length).optional(),
  /** True: it changes any version; otherwise only those its user released. */
  anyVersion: z.boolean().optional(),
});
export type PublishTokenRecord = z.infer<typeof PublishTokenRecord>;

/** What a token may do: a token made before scopes keeps what it could, publish, edit and withdraw (on its user's versions). */
export const scopesOf = (record: Pick<PublishTokenRecord, 'scopes'>): PublishScope[] => [
  ...(record.scopes ?? PUBLISH_SCOPES),
];

/**
 * lastUsedAt is written at most this often per token: a write on every publishing request would
 * put a lock (files) or a script (Redis) on the request's path for a figure shown to the minute.
 */
export const LAST_USED_EVERY_MS = 60_000;

/** The storage key of a token's record: its digest, so a request finds it with one read. */
export const publishTokenKey = (tokenHash: string) => `publish-tokens:${tokenHash}`;
