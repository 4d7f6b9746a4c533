import type { Refusal } from '../../server/publish/refusal.ts';

/**
 * A command refused for what it was given (a bad option, a missing file): one line on stderr, exit 1.
 * `refusal` says why in terms the HTTP API answers with (issue 30): 400, 409 or 422.
 */
export class RefusedError extends Error {
  readonly refusal: Refusal | undefined;
  /** The message as the HTTP API answers it, where it names a metadata field rather than an option. */
  readonly answer: string | undefined;
  constructor(message: string, refusal?: Refusal, answer?: string) {
    super(message);
    this.refusal = refusal;
    this.answer = answer;
  }
}
