/**
 * Issue 42 item 5: every secret the depot issues (publishing tokens `dpp_`, user tokens `dpt_`,
 * ingest keys `dpk_`, webhook secrets `dpw_`: newSecret's shape), wherever a client pasted it and
 * however it spelled it, is cut from what the depot writes or echoes: request log lines, warnings,
 * error answers. One function, used by all of them.
 */

/** A secret's kind, in any letter case, and what follows it in a token's alphabet (base64url). */
const SECRET = /(dp[ptkw]_)[A-Za-z0-9_-]+/gi;
/** A percent escape of an ASCII character, in either letter case: the only spelling a secret's characters need. */
const ASCII_ESCAPE = /%([0-7][0-9a-f])/gi;
/** Escapes of escapes (`%2564`) are undone this many times at most. */
const DECODE_ROUNDS = 4;

/**
 * `text` with each secret's part after its kind replaced by `[redacted]`. Percent escapes are
 * decoded first (an escaped `%64pp_` or `dp%70_` is the same token to whoever reads the line); a
 * text with a secret is shown decoded, one without is returned as it was.
 */
export function hideSecrets(text: string): string {
  let decoded = text;
  for (let round = 0; round < DECODE_ROUNDS && decoded.includes('%'); round++) {
    const next = decoded.replace(ASCII_ESCAPE, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    if (next === decoded) break;
    decoded = next;
  }
  const hidden = decoded.replace(SECRET, '$1[redacted]');
  return hidden === decoded ? text : hidden;
}
