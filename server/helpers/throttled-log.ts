/**
 * A log that says something at most once per interval (a minute by default): an outage is reported,
 * not every request it touches.
 */
export function throttledLog(
  log: (line: string) => void,
  now: () => number = Date.now,
  intervalMs = 60_000,
): (line: string) => void {
  let saidAt = -Infinity;
  return (line) => {
    if (now() - saidAt < intervalMs) return;
    saidAt = now();
    log(line);
  };
}
