import { z } from 'zod';
import { PluginVersion, WithdrawReason } from '../versions/schema.ts';

export const WEBHOOK_FORMATS = ['json', 'discord'] as const;
/**
 * What a webhook subscribes to (`release` unless `--events` says otherwise, so a webhook added
 * before issue 29 gets no `withdraw`); `ping` (from `depot webhook test`) reaches every webhook.
 */
export const WEBHOOK_EVENTS = ['release', 'withdraw'] as const;

export const WebhookId = z
  .string()
  .regex(/^wh-[0-9a-f]{12}$/, { error: 'must be a webhook id such as wh-0123456789ab' });
export const DeliveryId = z.string().regex(/^delivery-\d{13}-[0-9a-f]{12}$/);

/** Where deliveries go: whatever http(s) URL the operator names; fetch refuses URLs with credentials. */
export const WebhookUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .max(2048, { error: 'must be at most 2048 characters' })
  .refine((url) => !URL.canParse(url) || !/^[a-z]+:\/\/[^/?#]*@/i.test(url), {
    error: 'must not carry a user name or password (put a token in the path or query instead)',
  });

/** A webhook as stored: its secret in clear, since the origin signs each body with it (docs/operations.md: Where secrets live). */
export const WebhookRecord = z.strictObject({
  id: WebhookId,
  url: WebhookUrl,
  format: z.enum(WEBHOOK_FORMATS),
  events: z.array(z.enum(WEBHOOK_EVENTS)).min(1),
  secret: z.string().regex(/^dpw_[A-Za-z0-9_-]{43}$/),
  createdAt: z.iso.datetime(),
  /** The user it was added for (`--owner`): `depot user remove` refuses while they own one. */
  owner: z.string().min(1).optional(),
});
export type WebhookRecord = z.infer<typeof WebhookRecord>;

/** One attempt's outcome: the answer's status, or why there was none. */
export const Attempt = z.strictObject({
  at: z.iso.datetime(),
  status: z.int().optional(),
  error: z.string().max(300).optional(),
  ms: z.int().nonnegative(),
});
export type Attempt = z.infer<typeof Attempt>;

/**
 * What is announced: a released version as the API serves it (extra fields kept); a withdrawn one,
 * as the API serves it once withdrawn, and why (issue 29); or a test.
 */
export const DeliveryEvent = z.discriminatedUnion('event', [
  z.strictObject({ event: z.literal('release'), version: PluginVersion.loose() }),
  z.strictObject({ event: z.literal('withdraw'), version: PluginVersion.loose(), reason: WithdrawReason }),
  z.strictObject({ event: z.literal('ping'), webhookId: WebhookId }),
]);
export type DeliveryEvent = z.infer<typeof DeliveryEvent>;
/** An announcement of a change to what is served: every event but the test. */
export type Announcement = Exclude<DeliveryEvent, { event: 'ping' }>;

/** An outbox entry (pending) or, once finished, its record in the webhook's bounded log. */
export const Delivery = z.strictObject({
  id: DeliveryId,
  webhookId: WebhookId,
  payload: DeliveryEvent,
  createdAt: z.iso.datetime(),
  state: z.enum(['pending', 'delivered', 'failed']),
  nextAttemptAt: z.iso.datetime(),
  attempts: z.int().nonnegative(),
  /** The latest attempts, newest last (at most RECENT_ATTEMPTS). */
  recent: z.array(Attempt),
  finishedAt: z.iso.datetime().optional(),
});
export type Delivery = z.infer<typeof Delivery>;
