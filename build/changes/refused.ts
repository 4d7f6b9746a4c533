import type { Refusal } from '../../server/publish/refusal.ts';

/**
 * A command refused for what it was given (a bad option, a missing file): one line on stderr, exit 1.
 * `refusal` says why in terms the HTTP API answers with (issue 30): 400, 409 or 422.
 */
export class RefusedError extends Error {
  readonly refusal: Refusal | undefined;
  constructor(message: string, refusal?: Refusal) {
    super(message);
    this.refusal = refusal;
  }
}
