import type { PluginVersion } from '../../server/versions/schema.ts';
import type { Delivery } from '../../server/webhooks/schema.ts';
import { webhookStore } from '../../server/webhooks/store.ts';
import { RefusedError } from './refused.ts';
import { withState } from './state.ts';

/**
 * A release's announcements: one outbox entry per webhook subscribed to releases, carrying the
 * version object as the new catalog presents it (as the new tree will serve it). Written before
 * the release's record, so no crash after it loses an announcement: the origins send each only
 * once the tree they serve holds the version (DeliveryOptions.serves). Returns `withdraw`, for a
 * release that fails before its record is written.
 */
export async function enqueueReleaseWebhooks(
  config: { storageDir: string; redisUrl?: string | undefined },
  version: PluginVersion,
  now: number,
): Promise<{ told: number; withdraw: () => Promise<void> }> {
  const state = { storageDir: config.storageDir, redisUrl: config.redisUrl };
  const written = await withState(state, async ({ storage, redis }) => {
    const store = webhookStore(storage, redis);
    const subscribed = (await store.list()).filter((w) => w.events.includes('release'));
    const deliveries: Delivery[] = [];
    for (const webhook of subscribed)
      deliveries.push(await store.enqueue(webhook.id, { event: 'release', version }, now));
    return deliveries;
  }).catch((error: unknown) => {
    throw new RefusedError(
      `nothing was released: its webhook deliveries could not be written (${(error as Error).message})`,
    );
  });
  const withdraw = () =>
    withState(state, async ({ storage, redis }) => {
      const store = webhookStore(storage, redis);
      for (const delivery of written) await store.drop(delivery);
    });
  return { told: written.length, withdraw };
}
