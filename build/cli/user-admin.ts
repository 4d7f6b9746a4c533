import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { removeServerState } from '../../server/charts/server-state.ts';
import { serverStore } from '../../server/charts/servers.ts';
import type { Config } from '../../server/config.ts';
import type { StateStore } from '../../server/storage.ts';
import { userTokenStore } from '../../server/users.ts';
import { createCatalog, loadUsers, type Catalog } from '../../server/versions/catalog.ts';
import { UserProfiles } from '../../server/versions/schema.ts';
import { webhookStore } from '../../server/webhooks/store.ts';
import { writeFileAtomic } from '../../server/write-atomic.ts';
import { runBuild } from '../build.ts';
import { actorOf, auditChange } from '../changes/audit.ts';
import { RefusedError } from '../changes/refused.ts';
import { publishTokenStore } from '../../server/publish-tokens/store.ts';
import { withState } from '../changes/state.ts';

/** The servers and webhooks of the state store, by owner. */
async function ownership(state: StateStore) {
  const servers = await serverStore(state.storage).list();
  const webhooks = await webhookStore(state.storage, state.redis).list();
  return (username: string) => ({
    servers: servers.filter((server) => server.owner === username),
    webhooks: webhooks.filter((webhook) => webhook.owner === username),
  });
}

/** `user list`: every user's public profile, with how many servers and webhooks they own; never a token. */
export async function listUsers(args: string[], config: Config) {
  parseArgs({ args, options: {} });
  const users = await loadUsers(config.dataDir);
  const owned = await withState(config, ownership);
  return {
    users: users.map((user) => {
      const { servers, webhooks } = owned(user.username);
      return { ...user, servers: servers.length, webhooks: webhooks.length };
    }),
  };
}

type Owned = ReturnType<Awaited<ReturnType<typeof ownership>>>;

/** One line naming what the user still owns, unless they own nothing or `--force` removes it too. */
function refuseWhileOwning(username: string, { servers, webhooks }: Owned, force: boolean): void {
  if (force || servers.length + webhooks.length === 0) return;
  const list = (noun: string, ids: string[]) =>
    ids.length === 0 ? [] : [`${ids.length} ${noun}${ids.length === 1 ? '' : 's'} (${ids.join(', ')})`];
  const what = [
    ...list(
      'server',
      servers.map((s) => s.id),
    ),
    ...list(
      'webhook',
      webhooks.map((w) => w.id),
    ),
  ];
  throw new RefusedError(
    `user ${username} still owns ${what.join(' and ')}: remove them first, or pass --force to remove them too`,
  );
}

/** Removes what the user owns (with --force), then their tokens; answers what went. */
async function removeOwnedState(state: StateStore, username: string, force: boolean) {
  const owned = (await ownership(state))(username);
  refuseWhileOwning(username, owned, force);
  for (const server of owned.servers) await removeServerState(state.storage, server.id);
  const webhooks = webhookStore(state.storage, state.redis);
  for (const webhook of owned.webhooks) await webhooks.remove(webhook.id);
  const tokens = await userTokenStore(state.storage).removeUser(username);
  // Publishing tokens act as their user: they go with it, refused at once on every origin.
  const publishing = publishTokenStore(state.storage, state.redis);
  const revoked: string[] = [];
  for (const token of await publishing.list())
    if (token.username === username && (await publishing.revoke(token.id))) revoked.push(token.id);
  return {
    servers: owned.servers.map((s) => s.id),
    webhooks: owned.webhooks.map((w) => w.id),
    tokens,
    publishingTokens: revoked,
  };
}

/**
 * `user remove <username> [--force]`: the profile in data/users.json and the user's tokens; refused
 * while they own servers or webhooks, unless --force removes those too. Their versions keep
 * `createdBy` and no longer show `createdByUser`.
 */
export async function removeUser(args: string[], config: Config) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { force: { type: 'boolean', default: false }, by: { type: 'string' } },
  });
  const actor = actorOf(values.by);
  const username = positionals[0];
  if (username === undefined) throw new RefusedError('missing the username: depot user remove <username> [--force]');
  const unknown = () => new RefusedError(`no user ${JSON.stringify(username)}; see them with: depot user list`);
  if (!(await loadUsers(config.dataDir)).some((user) => user.username === username)) throw unknown();
  // Refused before the build lock is waited for; checked again under it.
  await withState(config, async (state) =>
    refuseWhileOwning(username, (await ownership(state))(username), values.force),
  );
  let removed: Awaited<ReturnType<typeof removeOwnedState>> | undefined;
  const change = async (catalog: Catalog) => {
    const users = await loadUsers(config.dataDir);
    if (!users.some((user) => user.username === username)) throw unknown();
    removed = await withState(config, (state) => removeOwnedState(state, username, values.force));
    const next = UserProfiles.parse(users.filter((user) => user.username !== username));
    await writeFileAtomic(join(config.dataDir, 'users.json'), `${JSON.stringify(next, null, 2)}\n`);
    return createCatalog(catalog.versions, next);
  };
  await runBuild({ ...config, cacheDir: config.buildCacheDir, change, log: (line) => console.error(line) });
  const answer = { username, removed: true, ...removed };
  await auditChange(config, {
    action: 'user remove',
    target: username,
    actor,
    changes: { force: values.force, ...removed },
  });
  return answer;
}
