import { readConfig } from './config.ts';
import { startOrigin } from './origin.ts';
import { createFileStorage } from './storage.ts';

/** Everything on stdout is one JSON object per line: request logs and these lifecycle events. */
const logLine = (fields: Record<string, unknown>) => console.log(JSON.stringify({ time: new Date().toISOString(), ...fields }));

/** A stop may take this long for requests in flight to finish; then they are cut off. */
const SHUTDOWN_DEADLINE_MS = 10_000;

const config = readConfig();
const storage = createFileStorage(config.storageDir);
const origin = await startOrigin({ ...config, storage, log: logLine });
logLine({ event: 'listening', url: origin.url, dist: `${config.distDir}/current`, rateLimit: config.rateLimit, redis: config.redisUrl !== undefined });

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    const started = performance.now();
    logLine({ event: 'stopping', signal });
    setTimeout(() => {
      logLine({ event: 'stopped', forced: true, ms: SHUTDOWN_DEADLINE_MS });
      origin.server.closeAllConnections();
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    await origin.close();
    await storage.dispose();
    logLine({ event: 'stopped', ms: Math.round(performance.now() - started) });
    process.exit(0);
  });
}
