import type { z } from 'zod';

/**
 * The one character rule for free text from outside (file names, versions, names, changelogs):
 * whatever reaches a header, a config, a feed or a page. Control characters split headers, log lines
 * and XML (which cannot hold C0 controls at all); format characters are invisible and reorder or hide
 * text (U+202E shows `x\u202Egnp.jar` as `xraj.png`); lone surrogates are not text; U+FFFE and U+FFFF
 * are not XML. The zero-width joiner stays allowed between two emoji, where it is part of one.
 */
const FORBIDDEN_IN_LINE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\uFFFE\uFFFF]/u;

/**
 * A changelog is Markdown over many lines: tabs and line breaks belong to it, and so do the
 * invisible characters of ordinary text (zero-width spaces and joiners, direction marks). What it
 * may not hold: other controls, the bidi embeddings, overrides and isolates that reorder what a
 * reader sees (Trojan Source), lone surrogates, U+FFFE and U+FFFF.
 */
const FORBIDDEN_IN_MARKDOWN =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\uFFFE\uFFFF\p{Cs}]/u;

/** Emoji joined into one (👩‍💻): a joiner between two pictographs, an optional variation selector before it. */
const EMOJI_JOINER = /(?<=\p{Extended_Pictographic}\uFE0F?)\u200D(?=\p{Extended_Pictographic})/gu;

/** `]]>` ends an XML CDATA section: refused where a field is a name or a version, escaped everywhere else. */
export const CDATA_END = ']]>';

export type TextKind = 'line' | 'markdown';

/** The first character of `text` the rule refuses, or undefined. */
export function forbiddenCharacter(text: string, kind: TextKind = 'line'): string | undefined {
  if (kind === 'markdown') return FORBIDDEN_IN_MARKDOWN.exec(text)?.[0];
  return FORBIDDEN_IN_LINE.exec(text.replace(EMOJI_JOINER, ''))?.[0];
}

/** `text` with each character the rule refuses written as a `\u` escape (`\u202e`): safe to print on one line. */
export function escapeForbidden(text: string): string {
  return text.replace(new RegExp(FORBIDDEN_IN_LINE.source, 'gu'), (char) =>
    char
      .split('')
      .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join(''),
  );
}

/** `U+202E`. */
const codePointName = (char: string) => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** What a refusal calls the character: `a control character (U+000A)`, `a format character (U+202E)`. */
export function describeCharacter(char: string): string {
  const kind = /\p{Cc}/u.test(char)
    ? 'a control character'
    : /\p{Cf}/u.test(char)
      ? 'a format character'
      : /\p{Cs}/u.test(char)
        ? 'a lone surrogate'
        : /[\p{Zl}\p{Zp}]/u.test(char)
          ? 'a line or paragraph separator'
          : 'a noncharacter';
  return `${kind} (${codePointName(char)})`;
}

/** The refusal of `text` by the rule, as one sentence, or undefined when it holds. */
export function freeTextProblem(text: string, options: { kind?: TextKind; cdata?: boolean } = {}): string | undefined {
  const char = forbiddenCharacter(text, options.kind);
  if (char !== undefined)
    return options.kind === 'markdown'
      ? `contains ${describeCharacter(char)}; control characters and bidi overrides are not allowed`
      : `contains ${describeCharacter(char)}; control and invisible formatting characters are not allowed`;
  if (options.cdata === false && text.includes(CDATA_END)) return `contains "${CDATA_END}", which is not allowed`;
  return undefined;
}

/** The rule for zod: `.superRefine(refuseForbiddenText({ cdata: false }))`. */
export function refuseForbiddenText(options: { kind?: TextKind; cdata?: boolean } = {}) {
  return (text: string, ctx: z.RefinementCtx) => {
    const problem = freeTextProblem(text, options);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, input: text });
  };
}

/**
 * Text from outside (a path, a zip entry's name) as a refusal shows it: as written when it holds no
 * forbidden character, else quoted with those escaped, so it stays one harmless line.
 */
export function shownLine(text: string): string {
  if (forbiddenCharacter(text) === undefined) return text;
  return `"${escapeForbidden(text.replace(/["\\]/g, '\\$&'))}"`;
}
