import { describeIssues } from '../../server/helpers/describe-issues.ts';
import { DeliveryEvent, type Announcement, type Delivery } from '../../server/webhooks/schema.ts';
import { webhookStore } from '../../server/webhooks/store.ts';
import { RefusedError } from './refused.ts';
import { withState } from './state.ts';

/** What a refusal says did not happen, per event. */
const NOT_DONE: Record<Announcement['event'], string> = {
  release: 'nothing was released',
  withdraw: 'nothing was withdrawn',
};

/**
 * A change's announcements: one outbox entry per webhook subscribed to its event, carrying the
 * version object as the new catalog presents it (as the new tree will serve it). Written before
 * the change's record, so no crash after it loses an announcement: the origins send each only
 * once the tree they serve shows the change (announcementServed: a release's version, a withdraw's
 * version withdrawn). Returns `cancel`, for a change that fails before its record is written.
 */
export async function enqueueWebhooks(
  config: { storageDir: string; redisUrl?: string | undefined },
  message: Announcement,
  now: number,
): Promise<{ told: number; cancel: () => Promise<void> }> {
  // Checked here, where it enters the store: an entry the origins cannot parse would wait unsent.
  const parsed = DeliveryEvent.safeParse(message);
  if (!parsed.success) throw new RefusedError(`${NOT_DONE[message.event]}: ${describeIssues(parsed.error.issues)}`);
  // Parsing keeps the event it was given.
  const payload = parsed.data as Announcement;
  const state = { storageDir: config.storageDir, redisUrl: config.redisUrl };
  const written = await withState(state, async ({ storage, redis }) => {
    const store = webhookStore(storage, redis);
    const subscribed = (await store.list()).filter((w) => w.events.includes(payload.event));
    const deliveries: Delivery[] = [];
    for (const webhook of subscribed) deliveries.push(await store.enqueue(webhook.id, payload, now));
    return deliveries;
  }).catch((error: unknown) => {
    throw new RefusedError(
      `${NOT_DONE[payload.event]}: its webhook deliveries could not be written (${(error as Error).message})`,
    );
  });
  const cancel = () =>
    withState(state, async ({ storage, redis }) => {
      const store = webhookStore(storage, redis);
      for (const delivery of written) await store.drop(delivery);
    });
  return { told: written.length, cancel };
}
