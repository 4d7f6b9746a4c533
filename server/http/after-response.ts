import { throttledLog } from '../helpers/throttled-log.ts';

const reporters = new Map<string, (line: string) => void>();

/** stderr, at most once a minute per kind of work: a fault that every request hits is said once, not per request. */
function reportOnce(what: string, error: unknown): void {
  let report = reporters.get(what);
  if (!report) reporters.set(what, (report = throttledLog((line) => console.error(line))));
  report(
    `[${what}] failed after the answer; ignored (said at most once a minute): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
}

/**
 * Work that runs beside or after an answer (the request log, 'close' and 'finish' listeners, a
 * failed write's clean-up) must never stop the process: Node turns a throw in an event listener or
 * an unhandled rejection into an exit, so one bad request would take every client down with it.
 * The error is reported to stderr (once a minute per `what`) and swallowed.
 */
export function guarded<A extends unknown[]>(
  what: string,
  work: (...args: A) => unknown,
  report: (what: string, error: unknown) => void = reportOnce,
): (...args: A) => void {
  return (...args) => {
    try {
      const result = work(...args);
      if (result && typeof (result as Promise<unknown>).then === 'function')
        (result as Promise<unknown>).then(undefined, (error: unknown) => report(what, error));
    } catch (error) {
      report(what, error);
    }
  };
}
