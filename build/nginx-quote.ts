import { refuseControl } from './config-line.ts';

/**
 * A double-quoted nginx string, for what nginx takes literally (map keys, regular expressions,
 * default_type). A line break or other control character cannot be written in one: refused.
 */
export function quote(text: string): string {
  refuseControl(text);
  return NEEDS_ESCAPE.test(text) ? `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"` : `"${text}"`;
}
const NEEDS_ESCAPE = /[\\"]/;

/**
 * A double-quoted nginx string for a directive that expands variables (add_header, return, alias,
 * an `if` comparison, a map's value), holding `text` literally: nginx has no escape for `$`, so each
 * one is the variable DOLLAR_VARIABLE defines (issue 27: a JAR named `x$host.jar` had nginx send the
 * request's host in Content-Disposition, and `$nope` failed nginx -t). `variables` follows unescaped.
 */
export function quoteValue(text: string, variables = ''): string {
  return `${quote(text).slice(0, -1).replaceAll('$', '${depot_dollar}')}${variables}"`;
}
export const DOLLAR_VARIABLE = `# A literal $ in strings where nginx expands variables (quoteValue).
geo $depot_dollar {
  default "$";
}`;

/** A file path for alias: as written when it is plain (as tree folders are), else quoted by quoteValue. */
export function pathValue(path: string, variables = ''): string {
  return /^[\w/.+@,=%~-]+$/.test(path) ? `${path}${variables}` : quoteValue(path, variables);
}

/** A header name as nginx writes it unquoted: a token, as HTTP defines one. */
export function headerName(name: string): string {
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || name.includes('$'))
    throw new Error(`nginx.conf: ${JSON.stringify(name)} is not a header name`);
  return name;
}
