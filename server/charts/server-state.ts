import pLimit from 'p-limit';
import { sha256Hex } from '../helpers/digest.ts';
import { CACHE_PREFIX, type Storage } from '../storage.ts';
import { serverKey } from './servers.ts';

/** The chart cache's namespace in the store (`cache:charts:...`). */
export const CHART_CACHE = 'charts';

/** A chart's cache key: under its server's id, so the server's cached charts can be listed and removed with it. */
export function chartCacheKey(serverId: string, query: object): string {
  return `${serverId}:${sha256Hex(JSON.stringify(query))}`;
}

/**
 * Where a server's state lives in either backend: its player-count days (and the days kept aside
 * as corrupt), its Idempotency-Keys (the embedded store's per-day records, Redis's slots and daily
 * counts), its cached charts, and its key's ingestion rate-limit counters (Redis's `depot:rate:ingest:<id>`).
 */
const serverPrefixes = (id: string) => ({
  samples: [`samples:${id}`],
  idempotencyKeys: [`idempotency:${id}`, `idempotency:count:${id}`],
  cachedCharts: [`${CACHE_PREFIX}:${CHART_CACHE}:${id}`],
  rateCounters: [`rate:ingest:${id}`],
});

/** Stored days of player counts of the server (the ones kept aside as corrupt left out). */
export async function storedSampleDays(storage: Storage, id: string): Promise<number> {
  return (await storage.getKeys(`samples:${id}`)).filter((key) => !key.includes('.corrupt-')).length;
}

export type RemovedState = { sampleDays: number; idempotencyKeys: number; cachedCharts: number };

/**
 * Removes a server: its record first, so its chart and ingestion answer 404 at once (ingestion
 * reads the record fresh; charts remember it under a second), then every record kept for it.
 */
export async function removeServerState(storage: Storage, id: string): Promise<RemovedState> {
  await storage.removeItem(serverKey(id));
  // Before per-key records, the embedded store kept all of a server's keys in this one file.
  await storage.removeItem(`idempotency:${id}`);
  const limit = pLimit(8);
  const removeUnder = async (prefixes: string[]) => {
    const keys = (await Promise.all(prefixes.map((prefix) => storage.getKeys(prefix)))).flat();
    await Promise.all(keys.map((key) => limit(() => storage.removeItem(key))));
    return keys;
  };
  const prefixes = serverPrefixes(id);
  const samples = await removeUnder(prefixes.samples);
  const idempotencyKeys = await removeUnder(prefixes.idempotencyKeys);
  const cachedCharts = await removeUnder(prefixes.cachedCharts);
  await removeUnder(prefixes.rateCounters);
  return {
    sampleDays: samples.filter((key) => !key.includes('.corrupt-')).length,
    idempotencyKeys: idempotencyKeys.filter((key) => !key.startsWith('idempotency:count:')).length,
    cachedCharts: cachedCharts.length,
  };
}
