import { hideSecrets } from './hide-secrets.ts';

/**
 * What the server's parts need of a logger. pino's satisfies it: main.ts makes one (stdout, one
 * JSON object per line) and gives each part a child that names it (`log.child({ component:
 * 'storage' })`), so every line says which part wrote it. Messages keep their `[storage]`-style
 * prefix: operators and tests match that text. Writing a line never throws (pino's destination
 * reports its own errors): lines are written from handlers and after answers.
 */
export type Log = {
  warn(line: string): void;
  info(line: string): void;
  child(bindings: { component: string }): Log;
};

/**
 * Plain lines on stderr, as the CLI prints them, and as the server's parts print when no logger is
 * passed (a part run alone: a test, a benchmark, the build). The component is left out: the
 * lines name their part in their prefix.
 */
export const STDERR_LINES: Log = {
  warn: (line) => console.error(hideSecrets(line)),
  info: (line) => console.error(hideSecrets(line)),
  child: () => STDERR_LINES,
};

/** Says nothing: for a caller with nobody to tell (the static export reads a tree it has just checked). */
export const NO_LOG: Log = { warn: () => {}, info: () => {}, child: () => NO_LOG };
