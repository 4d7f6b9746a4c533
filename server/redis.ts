import { Redis } from 'ioredis';

/**
 * A Redis client for shared state (REDIS_URL). Commands fail at once while the connection is down
 * instead of queueing (callers fall back: the rate limit fails open), and the client reconnects by
 * itself, so Redis coming back needs no restart. Connection trouble is logged once per outage.
 */
export function connectRedis(url: string, log: (line: string) => void = console.warn): Redis {
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: (attempt) => Math.min(attempt * 200, 2000) });
  let down = false;
  client.on('error', (error: Error) => {
    if (down) return;
    down = true;
    log(`[redis] ${redactUrl(url)} unavailable: ${error.message}`);
  });
  client.on('ready', () => {
    if (down) log(`[redis] ${redactUrl(url)} back`);
    down = false;
  });
  return client;
}

/** REDIS_URL may carry a password: never log it. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
