import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { Config } from '../../server/config.ts';
import { newSecret } from '../../server/http/auth.ts';
import { attemptDelivery } from '../../server/webhooks/deliver.ts';
import {
  WEBHOOK_EVENTS,
  WEBHOOK_FORMATS,
  WebhookId,
  WebhookUrl,
  type Delivery,
  type WebhookRecord,
} from '../../server/webhooks/schema.ts';
import { requireUser } from './accounts.ts';
import { shownWebhookUrl } from '../../server/webhooks/shown-url.ts';
import { outboxKey, webhookStore } from '../../server/webhooks/store.ts';
import { actorOf, recordQuietly } from '../changes/audit.ts';
import { RefusedError } from '../changes/refused.ts';
import { withState } from '../changes/state.ts';

const AddOptions = z.object({
  url: WebhookUrl,
  format: z.enum(WEBHOOK_FORMATS, { error: `must be one of ${WEBHOOK_FORMATS.join(', ')}` }).default('json'),
  events: z
    .string()
    .default('release')
    .transform((list) => [...new Set(list.split(',').map((name) => name.trim()))])
    .pipe(
      z
        .array(z.enum(WEBHOOK_EVENTS, { error: `must be ${WEBHOOK_EVENTS.join(' or ')}, or both: release,withdraw` }))
        .min(1),
    ),
});

/** `webhook add|list|remove|test`: webhooks live in the state store, where the origins deliver from. */
export async function runWebhookCommand(args: string[], config: Config): Promise<object | null> {
  const [verb, ...rest] = args;
  switch (verb) {
    case 'add':
      return addWebhook(rest, config);
    case 'list':
      return listWebhooks(config);
    case 'remove':
      return removeWebhook(rest, config);
    case 'test':
      return testWebhook(rest, config);
  }
  return null;
}

/** `webhook add <url> [--format json|discord] [--events release,withdraw] [--owner <username>]`: the secret is printed here only. */
async function addWebhook(args: string[], config: Config) {
  const {
    values: { owner, ...values },
    positionals,
  } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      format: { type: 'string' },
      events: { type: 'string' },
      owner: { type: 'string' },
      by: { type: 'string' },
    },
  });
  const { by, ...options } = values;
  const actor = actorOf(by);
  const parsed = AddOptions.safeParse({ ...options, url: positionals[0] });
  if (!parsed.success) {
    if (positionals[0] === undefined)
      throw new RefusedError('missing the URL: depot webhook add <url> [--format json|discord]');
    throw new RefusedError(
      parsed.error.issues
        .map((i) => `${i.path[0] === 'url' ? 'url' : `--${String(i.path[0])}`}: ${i.message}`)
        .join('; '),
    );
  }
  if (owner !== undefined) await requireUser(config.dataDir, owner, '--owner');
  const webhook: WebhookRecord = {
    id: `wh-${randomBytes(6).toString('hex')}`,
    ...parsed.data,
    secret: newSecret('dpw'),
    createdAt: new Date().toISOString(),
    ...(owner === undefined ? {} : { owner }),
  };
  const changes = { url: shownWebhookUrl(webhook.url), format: webhook.format, events: webhook.events };
  await withState(config, async (state) => {
    await webhookStore(state.storage, state.redis).add(webhook);
    await recordQuietly(state, { action: 'webhook add', target: webhook.id, actor, changes });
  });
  return webhook;
}

/** `webhook list`: each webhook (no secret, its URL's shape only) with its pending count, last outcome and recent deliveries. */
async function listWebhooks(config: Config) {
  return withState(config, async ({ storage, redis }) => {
    const store = webhookStore(storage, redis);
    const webhooks = [];
    for (const { secret: _secret, ...webhook } of await store.list()) {
      const { pending, finished } = await store.deliveries(webhook.id);
      const recent = [...finished, ...pending].sort((a, b) => a.id.localeCompare(b.id));
      const attempts = recent.flatMap((d) => d.recent.map((attempt) => ({ delivery: d, attempt })));
      const last = attempts.sort((a, b) => a.attempt.at.localeCompare(b.attempt.at)).at(-1);
      webhooks.push({
        ...webhook,
        url: shownWebhookUrl(webhook.url),
        pending: pending.length,
        lastOutcome: last
          ? {
              delivery: last.delivery.id,
              event: last.delivery.payload.event,
              ...last.attempt,
              state: last.delivery.state,
              ...(last.delivery.state === 'pending' ? { nextAttemptAt: last.delivery.nextAttemptAt } : {}),
            }
          : null,
        deliveries: recent.reverse().map(deliverySummary),
      });
    }
    return { webhooks };
  });
}

function deliverySummary(delivery: Delivery) {
  return {
    delivery: delivery.id,
    event: delivery.payload.event,
    state: delivery.state,
    createdAt: delivery.createdAt,
    attempts: delivery.attempts,
    ...(delivery.state === 'pending' ? { nextAttemptAt: delivery.nextAttemptAt } : {}),
    ...(delivery.finishedAt ? { finishedAt: delivery.finishedAt } : {}),
    // Newest last: time, status or error, duration.
    recentAttempts: delivery.recent,
  };
}

function webhookIdArg(args: string[], command: string): string {
  if (args[0] === undefined) throw new RefusedError(`missing the webhook id: depot webhook ${command} <id>`);
  const id = WebhookId.safeParse(args[0]);
  if (!id.success) throw new RefusedError(`id: ${id.error.issues[0]!.message}`);
  return id.data;
}

/** `webhook remove <id>`: the webhook, its pending deliveries and its log. */
async function removeWebhook(args: string[], config: Config) {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { by: { type: 'string' } } });
  const id = webhookIdArg(positionals, 'remove');
  const actor = actorOf(values.by);
  await withState(config, async (state) => {
    const store = webhookStore(state.storage, state.redis);
    const webhook = await store.get(id);
    if (!webhook || !(await store.remove(id))) throw new RefusedError(`no webhook with id ${id}`);
    const changes = { url: shownWebhookUrl(webhook.url), format: webhook.format, events: webhook.events };
    await recordQuietly(state, { action: 'webhook remove', target: id, actor, changes });
  });
  return { id, removed: true };
}

/**
 * `webhook test <id>`: a `ping` delivery through the outbox like any other, attempted once at
 * once from here under its lease (a running origin never sends it at the same time); a failure is
 * retried by the origins on the usual schedule.
 */
async function testWebhook(args: string[], config: Config) {
  const id = webhookIdArg(args, 'test');
  return withState(config, async ({ storage, redis }) => {
    const store = webhookStore(storage, redis);
    if (!(await store.get(id))) throw new RefusedError(`no webhook with id ${id}`);
    const delivery = await store.enqueue(id, { event: 'ping', webhookId: id }, Date.now());
    const result = await attemptDelivery(store, outboxKey(delivery), {
      publicUrl: config.publicUrl,
      now: Date.now,
      retryBaseMs: config.webhookRetryBaseMs,
    });
    const { finished, pending } = await store.deliveries(id);
    const now = [...finished, ...pending].find((d) => d.id === delivery.id);
    return {
      webhook: id,
      ...(now ? deliverySummary(now) : deliverySummary(delivery)),
      ...(result === 'skipped' ? { note: 'a running origin is attempting it' } : {}),
    };
  });
}
