import { createHmac } from 'node:crypto';
import { versionPagePath } from '../page-paths.ts';
import { versionLabel } from '../versions/channels.ts';
import { describeMinecraft } from '../versions/minecraft.ts';
import type { PluginVersion } from '../versions/schema.ts';
import type { Delivery, DeliveryEvent, WebhookRecord } from './schema.ts';
import { projectIconPath } from '../project/paths.ts';
import type { ProjectRecord } from '../project/schema.ts';

/** What one attempt sends; the same bytes on every attempt of a delivery, so a signature and a receiver's dedupe hold. */
export type WebhookRequest = { body: string; headers: Record<string, string> };

/** Discord's limits: an embed description of 4096 characters, a field value of 1024; an excerpt is far shorter. */
const CHANGELOG_EXCERPT = 400;

/** `sha256=<hex>`: HMAC-SHA256 of the body with the webhook's secret, as GitHub signs its deliveries. */
function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The request of a delivery, for the webhook's format; `publicUrl` makes the download link absolute. */
export function renderDelivery(
  delivery: Delivery,
  webhook: WebhookRecord,
  publicUrl: string,
  project?: ProjectRecord,
): WebhookRequest {
  const body = JSON.stringify(
    webhook.format === 'discord' ? discordMessage(delivery.payload, publicUrl, project) : delivery.payload,
  );
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'plugin-depot-webhooks/1',
    'x-depot-event': delivery.payload.event,
    'x-depot-delivery': delivery.id,
  };
  if (webhook.format === 'json') headers['x-depot-signature-256'] = signBody(webhook.secret, body);
  return { body, headers };
}

/** Discord's embed colour for a withdrawal: amber, a warning (an integer, as Discord takes it). */
export const WITHDRAW_COLOUR = 0xf59e0b;

/** A Discord "execute webhook" body: one embed per release or withdrawal, a line of text for a test. */
export function discordMessage(payload: DeliveryEvent, publicUrl: string, project?: ProjectRecord) {
  if (payload.event === 'ping') return { content: 'plugin depot: test delivery; this webhook works.' };
  const author = project ? embedAuthor(project, publicUrl) : {};
  if (payload.event === 'withdraw') {
    const message = withdrawMessage(payload.version, payload.reason, publicUrl);
    return { embeds: message.embeds.map((embed) => ({ ...author, ...embed })) };
  }
  const { version } = payload;
  const { changelog } = version;
  const downloadUrl = new URL(version.downloadUrl, publicUrl).href;
  return {
    embeds: [
      {
        ...author,
        title: `Version ${versionLabel(version)}`,
        url: downloadUrl,
        description: `${changelog ? `${excerpt(changelog)}\n\n` : ''}[Download ${version.fileName}](${downloadUrl})`,
        fields: versionFields(version),
        timestamp: version.createdAt,
      },
    ],
  };
}

/**
 * Issue 31: the embed's author is the project (data/project.json): its name, the site, its icon.
 * Discord shows an author's name as written (no Markdown), at most 256 characters; ours is at most 80.
 */
function embedAuthor(project: ProjectRecord, publicUrl: string) {
  const icon = project.icon ? { icon_url: new URL(projectIconPath(180), publicUrl).href } : {};
  return { author: { name: project.name, url: new URL('/', publicUrl).href, ...icon } };
}

/**
 * Issue 29: the version is withdrawn, and why: the reason as written, in an embed as a release's
 * changelog is (an embed's text mentions no one); the link goes to its page, which says what to
 * move to, not to the JAR.
 */
function withdrawMessage(version: PluginVersion, reason: string, publicUrl: string) {
  return {
    embeds: [
      {
        title: `Version ${versionLabel(version)} withdrawn`,
        url: new URL(versionPagePath(version.id), publicUrl).href,
        color: WITHDRAW_COLOUR,
        description: `Withdrawn: ${reason}\n\nServers running ${version.fileName} should move to another version.`,
        fields: versionFields(version),
        ...(version.withdrawn ? { timestamp: version.withdrawn.at } : {}),
      },
    ],
  };
}

function versionFields(version: PluginVersion) {
  return [
    { name: 'Software', value: version.serverSoftware.join(', '), inline: true },
    { name: 'Java', value: version.javaVersion, inline: true },
    { name: 'Minecraft', value: minecraftOf(version), inline: true },
  ];
}

function minecraftOf(version: PluginVersion): string {
  if (version.minecraftVersion !== undefined) return describeMinecraft(version);
  return version.proxyVersion ? `proxy ${version.proxyVersion}` : 'any';
}

/** The start of a changelog, cut at a line or word boundary near the limit. */
function excerpt(text: string): string {
  const trimmed = text.trim();
  if (trimmed.length <= CHANGELOG_EXCERPT) return trimmed;
  const cut = trimmed.slice(0, CHANGELOG_EXCERPT);
  const boundary = Math.max(cut.lastIndexOf('\n'), cut.lastIndexOf(' '));
  return `${cut.slice(0, boundary > CHANGELOG_EXCERPT / 2 ? boundary : CHANGELOG_EXCERPT).trimEnd()}…`;
}
