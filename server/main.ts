import pino from 'pino';
import { readConfig } from './config.ts';
import { startOrigin } from './origin.ts';
import { redactUrl } from './redis.ts';
import { createFileStorage } from './storage.ts';

/**
 * stdout carries one JSON object per line (pino, written in batches off the request path): request
 * logs, lifecycle events and warnings. Internal errors' stack traces go to stderr.
 */
const destination = pino.destination({ dest: 1, sync: false });
const logger = pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } }, destination);

/** A stop may take this long for requests in flight to finish; then they are cut off. */
const SHUTDOWN_DEADLINE_MS = 10_000;

const config = readConfig();
const storage = createFileStorage(config.storageDir);
const origin = await startOrigin({
  ...config,
  storage,
  ...(config.logRequests ? { log: (entry) => logger.info(entry) } : {}),
  warn: (line) => logger.warn(line),
});
logger.info({
  event: 'listening',
  url: origin.url,
  dist: `${config.distDir}/current`,
  rateLimit: config.rateLimit,
  ...(config.redisUrl ? { redis: redactUrl(config.redisUrl) } : {}),
});

function exit(code: number) {
  destination.flushSync();
  process.exit(code);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    const started = performance.now();
    logger.info({ event: 'stopping', signal });
    setTimeout(() => {
      logger.warn({ event: 'stopped', forced: true, ms: SHUTDOWN_DEADLINE_MS }, 'requests still running at the deadline were cut off');
      origin.server.closeAllConnections();
      exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    await origin.close();
    await storage.dispose();
    logger.info({ event: 'stopped', ms: Math.round(performance.now() - started) });
    exit(0);
  });
}
