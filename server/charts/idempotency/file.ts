import pLimit, { type LimitFunction } from 'p-limit';
import { z } from 'zod';
import type { Storage } from '../../storage.ts';
import { DAY } from '../../helpers/duration.ts';
import type { Log } from '../../helpers/log.ts';
import { IDEMPOTENCY_WINDOW_MS, digest, type IdempotencyStore } from './contract.ts';

/** The embedded store's record of one key: when it was first stored, and the digest of its body. */
const RememberedKey = z.strictObject({ at: z.number(), body: z.string().regex(/^[0-9a-f]{32}$/) });
type RememberedKey = z.infer<typeof RememberedKey>;

const recordKey = (serverId: string, day: number, key: string) => `idempotency:${serverId}:${day}-${digest(key)}`;

/**
 * The embedded store (files; memory in tests): one record per key, `idempotency/<server>/<UTC
 * day>-<key digest>`, so a keyed request reads two records and writes one however many keys the
 * server has sent. The embedded store has one origin: this process counts each server's keys of
 * the day, from the day's folder the first time, then as it stores them; one keyed ingestion per
 * server runs at a time, so a repeat waits for the first, then replays.
 */
export function fileIdempotencyStore(
  storage: Storage,
  { maxKeysPerDay, log }: { maxKeysPerDay: number; log: Log },
): IdempotencyStore {
  const perServer = new Map<string, LimitFunction>();
  const serialised = async <T>(serverId: string, run: () => Promise<T>): Promise<T> => {
    const queue = perServer.get(serverId) ?? pLimit(1);
    perServer.set(serverId, queue);
    try {
      return await queue(run);
    } finally {
      if (queue.activeCount === 0 && queue.pendingCount === 0) perServer.delete(serverId);
    }
  };
  const counted = new Map<string, { day: number; keys: number }>();

  return {
    maxKeysPerDay,
    once: (serverId, key, body, store, now) =>
      serialised(serverId, async () => {
        const earlier = await remembered(storage, serverId, key, now);
        if (earlier) return earlier.body === digest(body) ? 'replayed' : 'conflict';
        const today = Math.floor(now / DAY);
        const count = await keysToday(storage, counted, serverId, today);
        if (count.keys >= maxKeysPerDay) return 'capped';
        await store();
        count.keys++;
        // The samples are stored: the answer says so even when the key cannot be (a full disk),
        // since an error would make the client retry and count them twice for certain.
        await storage
          .setItem(recordKey(serverId, today, key), { at: now, body: digest(body) })
          .catch((error: unknown) =>
            log.warn(
              `[ingest] stored samples of server ${serverId}, but not their Idempotency-Key (a retry would count them again): ${error instanceof Error ? error.message : String(error)}`,
            ),
          );
        return 'stored';
      }),
  };
}

/** The keys `serverId` stored today; on a server's first keyed request of a day, sweeps its days past the window. */
async function keysToday(
  storage: Storage,
  counted: Map<string, { day: number; keys: number }>,
  serverId: string,
  today: number,
): Promise<{ day: number; keys: number }> {
  const known = counted.get(serverId);
  if (known?.day === today) return known;
  // Before per-key records, all of a server's keys were one file, `idempotency/<server>`: its
  // keys are dropped (they lived 24 hours) and the name becomes the server's folder.
  await storage.removeItem(`idempotency:${serverId}`);
  const stored = await storage.getKeys(`idempotency:${serverId}`);
  // The record's own name, `<day>-<digest>`, is the last segment: a publisher's scope (`publish:alice`) has two before it.
  const dayOf = (stored: string) => Number(stored.slice(stored.lastIndexOf(':') + 1).split('-')[0]);
  const limit = pLimit(8);
  await Promise.all(
    stored.filter((key) => dayOf(key) < today - 1).map((key) => limit(() => storage.removeItem(key).catch(() => {}))), // swept again tomorrow
  );
  const fresh = { day: today, keys: stored.filter((key) => dayOf(key) === today).length };
  counted.set(serverId, fresh);
  return fresh;
}

/** The key's record from today or yesterday, if it is still within 24 hours. */
async function remembered(storage: Storage, serverId: string, key: string, now: number): Promise<RememberedKey | null> {
  const today = Math.floor(now / DAY);
  for (const day of [today, today - 1]) {
    const parsed = RememberedKey.safeParse(await storage.getItem(recordKey(serverId, day, key)));
    if (parsed.success && parsed.data.at > now - IDEMPOTENCY_WINDOW_MS) return parsed.data;
  }
  return null;
}
