/**
 * Path segments that name a provider's route and are never a credential, shown as they are:
 * Discord's `/api[/v10]/webhooks/<id>/<token>[/slack|/github]`, Slack's
 * `/services/<team>/<bot>/<token>`, `/workflows/...` and `/triggers/...`, and the usual words of
 * a receiver's own path. Any other segment may be a token.
 */
const ROUTE_WORDS = new Set([
  'api',
  'webhooks',
  'webhook',
  'hooks',
  'hook',
  'services',
  'workflows',
  'triggers',
  'slack',
  'github',
  'incoming',
  'events',
]);
/** An API version such as Discord's `v10`. */
const API_VERSION = /^v\d{1,2}$/;
/** Query names shown: short lowercase words (`wait`, `thread_id`); anything else may carry a key. */
const QUERY_NAME = /^[a-z][a-z_]{0,19}$/;
const HIDDEN = '…';

/**
 * A webhook's URL as `webhook list` shows it: scheme, host and the path's shape only, since a URL
 * is often the credential itself (a Discord or Slack webhook's token is a path segment; a query
 * may carry a key). Route words stay; every other segment and every query value is `…`:
 * `https://discord.com/api/webhooks/…/…?wait=…`.
 */
export function shownWebhookUrl(url: string): string {
  if (!URL.canParse(url)) return HIDDEN;
  const parsed = new URL(url);
  const path = parsed.pathname
    .split('/')
    .map((segment) => (segment === '' || ROUTE_WORDS.has(segment) || API_VERSION.test(segment) ? segment : HIDDEN))
    .join('/');
  const query = [...parsed.searchParams.keys()].map((name) => `${QUERY_NAME.test(name) ? name : HIDDEN}=${HIDDEN}`);
  return `${parsed.protocol}//${parsed.host}${path}${query.length > 0 ? `?${query.join('&')}` : ''}`;
}
