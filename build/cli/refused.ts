/** A command refused for what it was given (a bad option, a missing file): one line on stderr, exit 1. */
export class RefusedError extends Error {}
