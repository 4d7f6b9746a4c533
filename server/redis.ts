import type { Command, Redis, RedisOptions } from 'ioredis';
import { STDERR_LINES, type Log } from './helpers/log.ts';

/**
 * How every Redis client here behaves: commands fail at once while the connection is down instead
 * of queueing, and within a second when Redis hangs, so callers answer (503, or the rate limit
 * failing open) rather than wait; the client reconnects by itself, so Redis coming back needs no
 * restart.
 */
export const REDIS_OPTIONS = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 2000,
  retryStrategy: (attempt: number) => Math.min(attempt * 200, 2000),
} satisfies RedisOptions;

/** How long a command may go unanswered (withCommandDeadline) before it fails as Redis being down. */
const COMMAND_DEADLINE_MS = 1000;

/**
 * A deadline on every command of `client` that counts Redis's silence, not this process's own
 * stalls. ioredis's commandTimeout is a plain timer: when the event loop was busy past it (a burst
 * of requests on a loaded machine), the timer runs before the reply already waiting in the socket
 * is read (timers come before I/O in a turn), and a Redis that answered at once reads as one that
 * hangs: a 503, or the rate limit failing open. This one, once due, lets that turn's I/O run first
 * (setImmediate), then fails the command as ioredis's would.
 */
export function withCommandDeadline(client: Redis, ms = COMMAND_DEADLINE_MS): Redis {
  const send = client.sendCommand.bind(client);
  client.sendCommand = (command: Command, stream?: Parameters<Redis['sendCommand']>[1]) => {
    const sent = send(command, stream);
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (!command.isResolved) command.reject(new Error('Command timed out'));
        }),
      ms,
    );
    const settled = () => clearTimeout(timer);
    command.promise.then(settled, settled);
    return sent;
  };
  return client;
}

/** Logs connection trouble once per outage, and the recovery. */
export function watchRedis(client: Redis, url: string, log: Log = STDERR_LINES): Redis {
  let down = false;
  client.on('error', (error: Error) => {
    if (down) return;
    down = true;
    log.warn(`[redis] ${redactUrl(url)} unavailable: ${error.message}`);
  });
  client.on('ready', () => {
    if (down) log.warn(`[redis] ${redactUrl(url)} back`);
    down = false;
  });
  return client;
}

/**
 * REDIS_URL may carry a user name and password (itself containing `@`, `:` or `/`) or a password in
 * its query: the URL parser decides where they end, and both are replaced, as are query values and
 * a path that is not a database number. A URL it cannot parse, or that leaves an `@` after its
 * host, shows only its scheme.
 */
export function redactUrl(url: string): string {
  const hidden = `${/^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? ''}//***`;
  if (!URL.canParse(url)) return hidden;
  const parsed = new URL(url);
  // An `@` after the host: a password with a `/`, `?` or `#` in it, whose start was read as the host.
  if ((parsed.pathname + parsed.search + parsed.hash).includes('@')) return hidden;
  if (parsed.username) parsed.username = '***';
  if (parsed.password) parsed.password = '***';
  // A database number is all a path holds; anything else there is a password's rest after a `/`.
  if (!/^\/?\d*$/.test(parsed.pathname)) parsed.pathname = '/***';
  parsed.hash = '';
  for (const name of new Set(parsed.searchParams.keys())) parsed.searchParams.set(name, '***');
  return parsed.href;
}

/** Resolves true once the client is connected, false after `ms` (callers start anyway, or refuse). */
export function redisReady(client: Redis, ms: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ready);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    client.on('ready', onReady);
  });
}
