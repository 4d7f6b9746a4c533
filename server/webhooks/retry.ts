/** Deliveries are retried this long after they were written, then given up (failed). */
export const DELIVERY_WINDOW_MS = 24 * 3_600_000;
/** The longest wait between two attempts. */
export const MAX_RETRY_DELAY_MS = 3_600_000;
/** The first retry comes this long after the first failure (WEBHOOK_RETRY_BASE_MS), doubling after each. */
export const DEFAULT_RETRY_BASE_MS = 30_000;
/** An attempt without a complete answer by then is a failure. */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * When a delivery that has failed `failures` times (1 or more) is tried again: `baseMs` doubled per
 * earlier failure, capped at an hour, and no sooner than a receiver's Retry-After; null once that
 * is past the 24 hours after `createdAt`: the delivery is given up.
 */
export function nextAttemptAt(
  failures: number,
  {
    createdAt,
    now,
    baseMs,
    retryAfterMs = 0,
  }: { createdAt: number; now: number; baseMs: number; retryAfterMs?: number },
): number | null {
  const backoff = Math.min(baseMs * 2 ** Math.min(failures - 1, 30), MAX_RETRY_DELAY_MS);
  const at = now + Math.min(Math.max(backoff, retryAfterMs), MAX_RETRY_DELAY_MS);
  return at > createdAt + DELIVERY_WINDOW_MS ? null : at;
}

/** Retry-After in seconds (HTTP dates are rare from webhook receivers and ignored), as ms; 0 when absent. */
export function retryAfterMs(header: string | null): number {
  return header && /^\d{1,6}$/.test(header.trim()) ? Number(header.trim()) * 1000 : 0;
}
