import { parseArgs } from 'node:util';
import { removeServerState, storedSampleDays } from '../../server/charts/server-state.ts';
import { ServerId } from '../../server/charts/schema.ts';
import { serverStore, type ServerRecord } from '../../server/charts/servers.ts';
import type { Config } from '../../server/config.ts';
import { hashSecret, newSecret } from '../../server/http/auth.ts';
import type { StateStore } from '../../server/storage.ts';
import { loadUsers } from '../../server/versions/catalog.ts';
import { actorOf, recordQuietly } from '../changes/audit.ts';
import { RefusedError } from '../changes/refused.ts';
import { withState } from '../changes/state.ts';

/** What `server list` shows of a server: never its ingest key or the key's digest. */
async function shownServer(state: StateStore, server: ServerRecord) {
  return {
    id: server.id,
    ...(server.name === undefined ? {} : { name: server.name }),
    owner: server.owner,
    private: server.private,
    createdAt: server.createdAt,
    sampleDays: await storedSampleDays(state.storage, server.id),
  };
}

/** `server list [--owner <username>]`: every server (or one user's), oldest first. */
export async function listServers(args: string[], config: Config) {
  const { values } = parseArgs({ args, options: { owner: { type: 'string' } } });
  const { owner } = values;
  if (owner !== undefined && !(await loadUsers(config.dataDir)).some((user) => user.username === owner))
    throw new RefusedError(`--owner: no user ${JSON.stringify(owner)}; see them with: depot user list`);
  return withState(config, async (state) => {
    const servers = (await serverStore(state.storage).list()).filter((s) => owner === undefined || s.owner === owner);
    return { servers: await Promise.all(servers.map((server) => shownServer(state, server))) };
  });
}

/** The server an id names in the state store, or a refusal naming what was wrong. */
async function existingServer(state: StateStore, id: string | undefined, usage: string): Promise<ServerRecord> {
  if (id === undefined) throw new RefusedError(`missing the server id: depot ${usage}`);
  const serverId = ServerId.safeParse(id);
  if (!serverId.success) throw new RefusedError(`serverId must be a UUID, e.g. depot ${usage}`);
  const server = await serverStore(state.storage).get(serverId.data, { fresh: true });
  if (!server) throw new RefusedError(`no server with id ${serverId.data}; see them with: depot server list`);
  return server;
}

/**
 * `server remove <id> --yes`: the server, its samples, its key's digest, its Idempotency-Keys and
 * its cached charts. Its chart and ingestion answer 404 on every origin within a second.
 */
export async function removeServer(args: string[], config: Config) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { yes: { type: 'boolean' }, by: { type: 'string' } },
  });
  const actor = actorOf(values.by);
  return withState(config, async (state) => {
    const server = await existingServer(state, positionals[0], 'server remove <id> --yes');
    if (!values.yes)
      throw new RefusedError(
        `--yes: missing; removing server ${server.id} deletes its player counts for good: run again with --yes`,
      );
    const removed = await removeServerState(state.storage, server.id);
    await recordQuietly(state, { action: 'server remove', target: server.id, actor, changes: { owner: server.owner } });
    return { id: server.id, owner: server.owner, removed: true, ...removed };
  });
}

/** `server token <id>`: a new ingest key, printed once; the old one is refused at once on every origin. */
export async function rotateIngestKey(args: string[], config: Config) {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { by: { type: 'string' } } });
  const actor = actorOf(values.by);
  const ingestKey = newSecret('dpk');
  return withState(config, async (state) => {
    const server = await existingServer(state, positionals[0], 'server token <id>');
    if (!(await serverStore(state.storage).replaceIngestKey(server.id, hashSecret(ingestKey))))
      throw new RefusedError(`no server with id ${server.id}; see them with: depot server list`);
    // The record says the key changed, never the key.
    await recordQuietly(state, {
      action: 'server token',
      target: server.id,
      actor,
      changes: { ingestKey: 'replaced' },
    });
    return { id: server.id, ingestKey };
  });
}
