import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { samplesFromBody } from '../../server/charts/ingest.ts';
import { sampleStore } from '../../server/charts/samples.ts';
import { ServerId } from '../../server/charts/schema.ts';
import { serverStore } from '../../server/charts/servers.ts';
import type { Config } from '../../server/config.ts';
import { describeIssues } from '../../server/helpers/describe-issues.ts';
import { hashSecret, newSecret } from '../../server/http/auth.ts';
import { userTokenStore } from '../../server/users.ts';
import { createCatalog, loadUsers, type Catalog } from '../../server/versions/catalog.ts';
import { UserProfile, UserProfiles } from '../../server/versions/schema.ts';
import { runBuild } from '../build.ts';
import { writeFileAtomic } from '../../server/write-atomic.ts';
import { actorOf, auditChange, recordQuietly } from '../changes/audit.ts';
import { RefusedError } from '../changes/refused.ts';
import { withState } from '../changes/state.ts';
import { freeTextProblem } from '../../server/free-text.ts';

/**
 * `user add <username> [--nickname N] [--image URL]`: a public profile in data/users.json (it
 * shows as createdByUser) and a new API token, printed once and stored only as its digest.
 */
export async function addUser(args: string[], config: Config) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { nickname: { type: 'string' }, image: { type: 'string' }, by: { type: 'string' } },
  });
  const { by, ...fields } = values;
  const actor = actorOf(by);
  const profile = UserProfile.safeParse({ id: `user-${randomUUID()}`, username: positionals[0] ?? '', ...fields });
  if (!profile.success) throw new RefusedError(describeIssues(profile.error.issues));
  const { username } = profile.data;
  const token = newSecret('dpt');
  // Under the build lock, and served as a release is (build/build.ts, serveChangeFirst).
  const change = async (catalog: Catalog) => {
    // data/users.json as it is now: it may hold users the served catalog does not yet.
    const users = await loadUsers(config.dataDir);
    if (users.some((u) => u.username === username)) throw new RefusedError(`user ${username} exists already`);
    const next = UserProfiles.parse([...users, profile.data]);
    await withState(config, ({ storage }) => userTokenStore(storage).add(username, token));
    await writeFileAtomic(join(config.dataDir, 'users.json'), `${JSON.stringify(next, null, 2)}\n`);
    return createCatalog(catalog.versions, next);
  };
  await runBuild({ ...config, cacheDir: config.buildCacheDir, change, log: (line) => console.error(line) });
  const { username: _username, ...changes } = profile.data;
  await auditChange(config, { action: 'user add', target: username, actor, changes });
  return { id: profile.data.id, username: profile.data.username, token };
}

/** `username` names a user of data/users.json, else a refusal (naming `option` when the name came with one). */
export async function requireUser(dataDir: string, username: string, option?: string): Promise<void> {
  if (!(await loadUsers(dataDir)).some((user) => user.username === username))
    throw new RefusedError(
      `${option ? `${option}: ` : ''}no user ${JSON.stringify(username)}; add one with: depot user add ${username}`,
    );
}

/** `server add --owner <username> [--private] [--name N]`: a UUID and an ingest key, printed once. */
export async function addServer(args: string[], config: Config) {
  const { values } = parseArgs({
    args,
    options: {
      owner: { type: 'string' },
      private: { type: 'boolean', default: false },
      name: { type: 'string' },
      by: { type: 'string' },
    },
  });
  const actor = actorOf(values.by);
  const owner = values.owner;
  if (!owner) throw new RefusedError('--owner: missing, e.g. --owner alice');
  await requireUser(config.dataDir, owner, '--owner');
  if (values.name !== undefined && (values.name.length === 0 || values.name.length > 100))
    throw new RefusedError('--name: must be 1 to 100 characters');
  const nameProblem = values.name === undefined ? undefined : freeTextProblem(values.name);
  if (nameProblem) throw new RefusedError(`--name: ${nameProblem}`);
  const ingestKey = newSecret('dpk');
  const server = {
    id: randomUUID(),
    owner,
    private: values.private,
    ...(values.name ? { name: values.name } : {}),
    ingestKeyHash: hashSecret(ingestKey),
    createdAt: new Date().toISOString(),
  };
  const changes = { owner, private: server.private, name: values.name };
  await withState(config, async (state) => {
    await serverStore(state.storage).add(server);
    await recordQuietly(state, { action: 'server add', target: server.id, actor, changes });
  });
  return { id: server.id, owner, private: server.private, ...(values.name ? { name: values.name } : {}), ingestKey };
}

/** `stats add <serverId> <players> [--at ISO]`: one sample, validated as the HTTP ingestion does. */
export async function addStats(args: string[], config: Config) {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { at: { type: 'string' } } });
  const [id, players] = positionals;
  const serverId = ServerId.safeParse(id);
  if (!serverId.success) throw new RefusedError('serverId must be a UUID');
  const sample = await withState(config, async ({ storage, redis }) => {
    if (!(await serverStore(storage).get(serverId.data))) throw new RefusedError(`no server with id ${serverId.data}`);
    if (!/^\d{1,7}$/.test(players ?? '') || Number(players) > 1_000_000)
      throw new RefusedError('players must be an integer from 0 to 1000000');
    const count = Number(players);
    const result = samplesFromBody(
      { samples: [{ at: values.at ?? new Date().toISOString(), players: count }] },
      Date.now(),
    );
    if ('error' in result)
      throw new RefusedError(result.error.replace(/^samples\[0\]\./, '--').replace(/^--players/, 'players'));
    await sampleStore(storage, redis).add(serverId.data, result.samples);
    return result.samples[0]!;
  });
  return { serverId: serverId.data, at: new Date(sample.at).toISOString(), players: sample.players };
}
