import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { CDATA_END, forbiddenCharacter, freeTextProblem, type TextKind } from '../free-text.ts';
import { CatalogVersion, UserProfile } from '../versions/schema.ts';
import { jarDigests } from '../versions/catalog-version.ts';
import { isJsonObject } from '../data-files.ts';

// A tree's catalog.json is written by the code that built the tree and read by the origin's code,
// which may be newer: origins restarted on an upgrade before the build that follows it. What newer
// code added or refuses since is made good here, so the live routes answer until the next build
// replaces the tree; anything else this code's schema refuses stays an error (a tree not as built).

/** What reading an older tree's catalog made good, said once per tree (describeOlderCatalog). */
export type OlderCatalogNotes = {
  /** Versions whose sha512 (in the catalog since the integrity fields) was computed from their JAR. */
  sha512: number;
  /** `<record>.<field>` the character rule (issue 27) refuses: optional ones left out, others without the refused characters. */
  text: string[];
};

export const noOlderCatalogNotes = (): OlderCatalogNotes => ({ sha512: 0, text: [] });

/**
 * A catalog.json version this code's schema refused, read as older code wrote it: with its sha512
 * computed from its JAR (`jarPath(sha256)`, checked against its sha256) when it has none, and its
 * text made to follow the character rule. Undefined when that is not enough: the caller reports
 * the schema's refusal of the version as written.
 */
export function readOlderVersion(
  raw: unknown,
  jarPath: (sha256: string) => string,
  notes: OlderCatalogNotes,
): CatalogVersion | undefined {
  if (!isJsonObject(raw)) return undefined;
  const version = { ...raw };
  if (version.sha512 === undefined && typeof version.sha256 === 'string' && /^[0-9a-f]{64}$/.test(version.sha256)) {
    const sha512 = jarSha512(jarPath(version.sha256), version.sha256);
    if (sha512 === undefined) return undefined;
    version.sha512 = sha512;
  }
  const text = followCharacterRule(version, CatalogVersion.shape, `${String(version.id)}`);
  const parsed = CatalogVersion.safeParse(version);
  if (!parsed.success) return undefined;
  if (raw.sha512 === undefined) notes.sha512++;
  notes.text.push(...text);
  return parsed.data;
}

/** catalog.json's users as older code wrote them, made to follow the character rule; other values as they are. */
export function readOlderUsers(raw: unknown, notes: OlderCatalogNotes): unknown {
  if (!isJsonObject(raw) || !Array.isArray(raw.users)) return raw;
  const users = raw.users.map((user: unknown) => {
    if (!isJsonObject(user)) return user;
    const made = { ...user };
    notes.text.push(...followCharacterRule(made, UserProfile.shape, `user ${String(user.username)}`));
    return made;
  });
  return { ...raw, users };
}

/** The line an origin logs once for a tree whose catalog needed what is above; null when it needed nothing. */
export function describeOlderCatalog(treeDir: string, notes: OlderCatalogNotes): string | null {
  const made = [
    notes.sha512 > 0 ? `${notes.sha512} versions' sha512 computed from their JARs` : '',
    notes.text.length > 0 ? `text the character rule refuses cleaned or left out (${listSome(notes.text)})` : '',
  ].filter(Boolean);
  if (made.length === 0) return null;
  return `[tree] ${treeDir} predates this code: its catalog was read with ${made.join('; ')}. Its precomputed answers are the older code's until the next build replaces the tree (npm start and npm run build rebuild it).`;
}

/** The first few of `items`: one log line, however many records an older tree holds. */
const listSome = (items: readonly string[], most = 10) =>
  items.length <= most ? items.join(', ') : `${items.slice(0, most).join(', ')} and ${items.length - most} more`;

/**
 * The JAR's sha512 in hex, or undefined when the file is missing or is not the JAR of `sha256`.
 * Read synchronously: the catalog is made on first use, inside a getter (open.ts), and only
 * a tree of older code pays it, once per version until the next build.
 */
function jarSha512(file: string, sha256: string): string | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  const digests = jarDigests(bytes);
  return digests.sha256 === sha256 ? digests.sha512 : undefined;
}

/** Names and versions may not hold `]]>` either (schema.ts's NameText). */
const NAME_FIELDS = new Set(['fileName', 'minecraftVersion', 'proxyVersion']);
const kindOf = (field: string): TextKind => (field === 'changelog' ? 'markdown' : 'line');

/**
 * Each string field of `record` that the character rule refuses: left out when the schema lets it
 * be absent, else kept without the refused characters (a download still needs its file name).
 * Returns `<what>.<field>` of each.
 */
function followCharacterRule(record: Record<string, unknown>, shape: Record<string, z.ZodType>, what: string) {
  const made: string[] = [];
  for (const [field, value] of Object.entries(record)) {
    const options = { kind: kindOf(field), cdata: !NAME_FIELDS.has(field) };
    if (typeof value !== 'string' || freeTextProblem(value, options) === undefined) continue;
    if (shape[field]?.safeParse(undefined).success) delete record[field];
    else record[field] = withoutRefused(value, options);
    made.push(`${what}.${field}`);
  }
  return made;
}

/** `text` without the characters the rule refuses, nor `]]>` where refused; each pass removes at least one character. */
function withoutRefused(text: string, options: { kind: TextKind; cdata: boolean }): string {
  let cleaned = text;
  for (let pass = 0; pass <= text.length; pass++) {
    const char = forbiddenCharacter(cleaned, options.kind);
    if (char !== undefined) cleaned = cleaned.split(char).join('');
    else if (!options.cdata && cleaned.includes(CDATA_END)) cleaned = cleaned.split(CDATA_END).join('');
    else break;
  }
  return cleaned;
}
