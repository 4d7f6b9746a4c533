import { join } from 'node:path';
import pino from 'pino';
import { readConfig } from './config.ts';
import { startOrigin } from './origin.ts';
import { redactUrl } from './redis.ts';
import { loadSharp } from './brands/sharp.ts';
import { sweepLeftovers } from './sweep-leftovers.ts';
import { hideSecrets } from './helpers/hide-secrets.ts';

/**
 * stdout carries one JSON object per line (pino, written in batches off the request path): request
 * logs, lifecycle events and warnings. Internal errors' stack traces go to stderr.
 */
const destination = pino.destination({ dest: 1, sync: false });
const logger = pino(
  {
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    // Every message line passes hideSecrets (request entries' paths already have): no secret of
    // ours a request carried reaches the log, whichever part writes it.
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((arg) => (typeof arg === 'string' ? hideSecrets(arg) : arg)) as typeof args);
      },
    },
  },
  destination,
);

/** A stop may take this long for requests in flight to finish; then they are cut off. */
const SHUTDOWN_DEADLINE_MS = 10_000;

const config = readConfig();
const origin = await startOrigin({
  ...config,
  // PUBLISH=on: this origin takes releases over HTTP, its uploads streamed into the store's folder.
  publishing: config.publish.enabled
    ? {
        maxBytes: config.publish.maxBytes,
        uploadsDir: join(config.storageDir, 'uploads'),
        afterSwap: config.publish.afterSwap,
      }
    : null,
  log: config.logRequests ? (entry) => logger.info(entry) : undefined,
  logger,
});
logger.info({
  event: 'listening',
  url: origin.url,
  dist: `${config.distDir}/current`,
  rateLimit: config.rateLimit,
  ...(config.redisUrl ? { redis: redactUrl(config.redisUrl) } : {}),
});
// The origin resizes images on request: libvips loads now, not on the first resize.
void loadSharp();
// What killed processes left (temporary files, lock folders), swept beside serving: walking a
// large store takes a moment (about 0.3 s per 20,000 files) that the first requests need not wait for.
sweepLeftovers([config.storageDir, config.dataDir, config.buildCacheDir]).then(
  (removed) => logger.info({ event: 'swept', removed: removed.length }),
  (error: unknown) =>
    logger.child({ component: 'sweep' }).warn(`[sweep] could not sweep leftover temporary files: ${String(error)}`),
);

function exit(code: number) {
  destination.flushSync();
  process.exit(code);
}

/**
 * SIGINTs closer together than this are one Ctrl-C: a terminal signals its whole foreground group,
 * so under `npm start` node gets the terminal's SIGINT and the one npm forwards.
 */
const SAME_KEYPRESS_MS = 100;
/** The Ctrl-C that cuts off requests in flight instead of waiting for them. */
const FORCING_INTERRUPT = 3;

let stopping = false;
let stopStartedAt = 0;
let interrupts = 0;
let lastInterruptAt = -Infinity;

// Repeated signals never cut a stop short: systemd and process-group kills reach npm and node, and
// npm forwards its own copy, so node sees two SIGTERMs for one stop. Only a person pressing Ctrl-C
// a third time forces it.
function onStopSignal(signal: 'SIGINT' | 'SIGTERM') {
  let sameKeypress = false;
  if (signal === 'SIGINT') {
    const now = performance.now();
    sameKeypress = now - lastInterruptAt < SAME_KEYPRESS_MS;
    if (!sameKeypress) interrupts++;
    lastInterruptAt = now;
  }
  if (sameKeypress) return;
  if (!stopping) {
    stopping = true;
    void stop(signal);
  } else if (signal === 'SIGINT' && interrupts >= FORCING_INTERRUPT) {
    logger.warn(
      { event: 'stopped', forced: true, signal, ms: Math.round(performance.now() - stopStartedAt) },
      `Ctrl-C ${FORCING_INTERRUPT} times: requests still running were cut off`,
    );
    origin.server.closeAllConnections();
    exit(1);
  } else {
    const force = signal === 'SIGINT' ? `; Ctrl-C ${FORCING_INTERRUPT - interrupts} more time(s) cuts them off` : '';
    logger.warn(
      { event: 'stopping', signal, repeated: true },
      `already stopping: requests in flight are finishing${force}`,
    );
  }
}

async function stop(signal: 'SIGINT' | 'SIGTERM') {
  stopStartedAt = performance.now();
  logger.info({ event: 'stopping', signal });
  setTimeout(() => {
    logger.warn(
      { event: 'stopped', forced: true, ms: SHUTDOWN_DEADLINE_MS },
      'requests still running at the deadline were cut off',
    );
    origin.server.closeAllConnections();
    exit(1);
  }, SHUTDOWN_DEADLINE_MS).unref();
  await origin.close();
  logger.info({ event: 'stopped', ms: Math.round(performance.now() - stopStartedAt) });
  exit(0);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, onStopSignal);
