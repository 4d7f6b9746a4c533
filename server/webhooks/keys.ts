import type { Delivery } from './schema.ts';

export const webhookKey = (id: string) => `webhooks:${id}`;
/** The storage key of a delivery's outbox entry. */
export const outboxKey = (d: Pick<Delivery, 'webhookId' | 'id'>) => `webhook-outbox:${d.webhookId}:${d.id}`;
export const logKey = (d: Pick<Delivery, 'webhookId' | 'id'>) => `webhook-log:${d.webhookId}:${d.id}`;
