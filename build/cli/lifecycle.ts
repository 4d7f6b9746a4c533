import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { Config } from '../../server/config.ts';
import { DataError, parseFile, readJsonFile } from '../../server/data-files.ts';
import { escapeForbidden } from '../../server/free-text.ts';
import { catalogVersion } from '../../server/versions/catalog-version.ts';
import {
  changelogPath,
  createCatalog,
  jarPath,
  readChangelog,
  recordPath,
  versionsDir,
  type Catalog,
} from '../../server/versions/catalog.ts';
import { channelOf, type Channel as ChannelName } from '../../server/versions/channels.ts';
import type { MinecraftRange } from '../../server/versions/minecraft.ts';
import { readClassFiles, type ClassFiles } from '../../server/versions/class-files.ts';
import { runsOnJava, type JavaVersion as JavaName } from '../../server/versions/java.ts';
import {
  Channel,
  JavaVersion,
  PLUGIN_VERSION_ID,
  PluginVersionRecord,
  WithdrawReason,
  type CatalogVersion,
} from '../../server/versions/schema.ts';
import { commitVersionChange } from '../version-commit.ts';
import { runBuild } from '../build.ts';
import { Actor } from '../../server/audit/schema.ts';
import { actorOf, auditChange } from './audit.ts';
import { RefusedError } from './refused.ts';
import { checkJava } from './release-java.ts';
import { enqueueWebhooks } from './announce.ts';
import { presentVersion } from '../../server/versions/present.ts';
import {
  MinecraftOption,
  ProxyOption,
  WRITTEN_LINE,
  minecraftFields,
  optionsRefused,
  readChangelogOption,
} from './release.ts';
import { PublishTokenId } from '../../server/publish-tokens/schema.ts';

/**
 * Issue 29: withdraw, restore and edit a released version. Each rewrites the version's record (and,
 * for an edit, its changelog) and is served first like a release: the same build, its delta tree
 * carrying the change before the answers that read it are rendered again. The JAR, its id, size,
 * digests and createdAt never change; updatedAt does.
 */

/**
 * A version's record after a change, its changelog (undefined: as it was), what the audit log
 * records, and for a withdrawal the reason its webhooks announce.
 */
type Revision = {
  record: PluginVersionRecord;
  changelog?: string;
  changes: Record<string, unknown>;
  announce?: { event: 'withdraw'; reason: string };
};

/** What a command decides of a version as it stands: its revision, or why there is nothing to do (exit 0). */
type Decision = Revision | { nothingToDo: string };

const VersionId = z
  .string({ error: 'missing the version id, such as plugin-1780412400000-b878942086' })
  .regex(PLUGIN_VERSION_ID, {
    error: 'must be a version id such as plugin-1780412400000-b878942086 (GET /api/plugin-versions lists them)',
  });

const WithdrawOptions = z.object({
  id: VersionId,
  tokenId: PublishTokenId.optional(),
  reason: z
    .string({ error: 'is required: say why, in 1 to 500 characters, e.g. --reason "corrupts worlds on 1.21.4"' })
    .pipe(WithdrawReason),
  by: Actor.optional(),
});

const RestoreOptions = z.object({ id: VersionId, by: Actor.optional(), tokenId: PublishTokenId.optional() });

/** The fields an edit may change: what does not change the JAR, and (issue 39) its Java, raised only. */
const EditOptions = z.object({
  id: VersionId,
  tokenId: PublishTokenId.optional(),
  channel: Channel.optional(),
  java: JavaVersion.optional(),
  changelog: z.string().min(1).optional(),
  minecraft: MinecraftOption.optional(),
  proxy: ProxyOption.optional(),
  by: Actor.optional(),
});

/** What a JAR's bytes fix: an edit refuses them, naming what to do instead. */
const FIXED_BY_THE_JAR = ['version', 'software', 'file', 'file-name', 'size', 'sha256', 'created-at', 'id'];

function parseOptions<T extends z.ZodType>(
  schema: T,
  args: string[],
  options: Record<string, { type: 'string' | 'boolean' }>,
): z.output<T> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { ...options, 'token-id': { type: 'string' } },
  });
  if (positionals.length > 1)
    throw new RefusedError(`one version id at a time; got ${positionals.length}: ${positionals.join(' ')}`);
  const { 'token-id': tokenId, ...rest } = values;
  const parsed = schema.safeParse({ ...rest, tokenId, id: positionals[0] });
  if (!parsed.success) throw optionsRefused(parsed.error.issues, 'id');
  return parsed.data;
}

/** Who asks for a change: `by` (the record's withdrawn.by), and the publishing token it came with (the audit log names it). */
type Requester = { by?: string | undefined; tokenId?: string | undefined };

export type WithdrawRequest = Requester & { id: string; reason: string };
export type RestoreRequest = Requester & { id: string };
/** An edit: what the JAR does not fix; the changelog as text already checked (checkChangelog). */
export type EditRequest = Requester & {
  id: string;
  channel?: ChannelName | undefined;
  changelog?: string | undefined;
  minecraft?: MinecraftRange[] | string | undefined;
  proxy?: string | undefined;
  /** Issue 39: raised only, and never below what the JAR's classes need. */
  java?: JavaName | undefined;
};

/** `withdraw <id> --reason "<text>" [--by alice]`. */
export function withdrawVersion(args: string[], config: Config, now: Date) {
  return withdraw(
    parseOptions(WithdrawOptions, args, { reason: { type: 'string' }, by: { type: 'string' } }),
    config,
    now,
  );
}

/** `restore <id> [--by alice]`. */
export function restoreVersion(args: string[], config: Config, now: Date) {
  return restore(parseOptions(RestoreOptions, args, { by: { type: 'string' } }), config, now);
}

/** `edit <id> [--channel C] [--changelog notes.md] [--minecraft RANGE] [--proxy V] [--java N] [--by alice]`. */
export async function editVersion(args: string[], config: Config, now: Date) {
  const fixed = Object.fromEntries(FIXED_BY_THE_JAR.map((name) => [name, { type: 'string' as const }]));
  const options = parseOptions(EditOptions, args, {
    ...fixed,
    channel: { type: 'string' },
    changelog: { type: 'string' },
    minecraft: { type: 'string' },
    proxy: { type: 'string' },
    java: { type: 'string' },
    by: { type: 'string' },
  });
  const asked = FIXED_BY_THE_JAR.find((name) =>
    args.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`)),
  );
  if (asked)
    throw new RefusedError(
      `--${asked}: cannot change: the JAR fixes it; release a new version (and withdraw this one) instead`,
    );
  const asks = [options.channel, options.changelog, options.minecraft, options.proxy, options.java];
  if (asks.every((value) => value === undefined))
    throw new RefusedError('nothing to change: give --channel, --changelog, --minecraft or --proxy');
  const changelog = options.changelog === undefined ? undefined : await readChangelogOption(options.changelog);
  return edit({ ...options, changelog }, config, now);
}

/** A version withdrawn: in no latest, resolve or update-check answer; announced to the webhooks subscribed to withdraw. */
export function withdraw(request: WithdrawRequest, config: Config, now: Date) {
  const { reason } = request;
  return changeVersion(config, request, 'withdraw', now, (record) => {
    if (record.withdrawn)
      return { nothingToDo: `${record.id} is already withdrawn (${JSON.stringify(record.withdrawn.reason)})` };
    const withdrawn = { reason, at: now.toISOString(), by: request.by ?? 'operator' };
    return { record: { ...record, withdrawn }, changes: { reason }, announce: { event: 'withdraw', reason } };
  });
}

/** A withdrawn version answered again as before its withdrawal. */
export function restore(request: RestoreRequest, config: Config, now: Date) {
  return changeVersion(config, request, 'restore', now, (record) => {
    if (!record.withdrawn)
      throw new RefusedError(`${record.id} is not withdrawn; nothing to restore (withdraw it with depot withdraw)`, {
        kind: 'conflict',
      });
    const { withdrawn, ...restored } = record;
    return { record: restored, changes: { withdrawnReason: withdrawn.reason } };
  });
}

/** What the JAR does not fix, changed: channel, changelog, Minecraft versions, proxy version; and its Java, raised. */
export async function edit(request: EditRequest, config: Config, now: Date) {
  const { channel, changelog, minecraft, proxy, java } = request;
  // The JAR never changes: its class files are read once, before the change is decided.
  const classes = java === undefined ? undefined : await readJarClasses(config.dataDir, request.id);
  return changeVersion(config, request, 'edit', now, (record, version) => {
    const { minecraftVersion: _version, minecraftVersions: _ranges, ...rest } = record;
    const edited: PluginVersionRecord = {
      ...(minecraft === undefined ? record : { ...rest, ...minecraftFields(minecraft) }),
      ...(proxy === undefined ? {} : { proxyVersion: proxy }),
      ...(channel === undefined ? {} : { channel }),
      ...(java === undefined ? {} : raisedJava(record, java, classes!)),
    };
    const changes = editedFields(record, edited);
    if (changelog !== undefined && changelog !== version.changelog)
      changes.changelog = `replaced (${Buffer.byteLength(changelog)} bytes)`;
    if (Object.keys(changes).length === 0) return { nothingToDo: `${record.id} already has what the edit asks` };
    return { record: edited, ...(changelog === undefined ? {} : { changelog }), changes };
  });
}

/** The editable fields whose value an edit changes, each with its new value (null: removed). */
function editedFields(before: PluginVersionRecord, after: PluginVersionRecord): Record<string, unknown> {
  const value = (record: PluginVersionRecord, field: (typeof EDITABLE)[number]) =>
    field === 'channel' ? channelOf(record) : (record[field] ?? null);
  const fields = EDITABLE.filter(
    (field) => JSON.stringify(value(before, field)) !== JSON.stringify(value(after, field)),
  );
  return Object.fromEntries(fields.map((field) => [field, value(after, field)]));
}

const EDITABLE = ['channel', 'proxyVersion', 'minecraftVersion', 'minecraftVersions', 'javaVersion'] as const;

/**
 * Issue 39: a version's Java raised, to at least what its classes need: servers already offered it
 * keep it, none that cannot load it is offered it. Lowering it would offer it to servers its
 * release never named: that is a new release.
 */
function raisedJava(record: PluginVersionRecord, java: JavaName, classes: ClassFiles) {
  if (runsOnJava(java, record.javaVersion))
    throw new RefusedError(
      `--java: cannot change: the JAR fixes it; release a new version (and withdraw this one) instead: an edit only raises a version's Java, and ${record.id} is listed for Java ${record.javaVersion}`,
      { kind: 'field', field: 'javaVersion' },
    );
  const raised = checkJava(classes, java, { jar: `${record.id}'s JAR`, fix: 'release' });
  const { java: javaVersion, classFileVersion } = raised;
  return { javaVersion, ...(classFileVersion === undefined ? {} : { classFileVersion }) };
}

/** The class files of a version's JAR in data/. */
async function readJarClasses(dataDir: string, id: string): Promise<ClassFiles> {
  const bytes = await readFile(jarPath(dataDir, id)).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT')
      throw new RefusedError(`no version ${id} in ${versionsDir(dataDir)} (GET /api/plugin-versions lists them)`, {
        kind: 'unknown-version',
      });
    throw error;
  });
  return readClassFiles(bytes);
}

/**
 * Decides the change against the version's record in data/ (nothing to do, or a refusal, leaves
 * data/ and the served tree as they were), then, under the build lock, against the version as the
 * served catalog holds it: writes its changelog, then its record (the commit point), and builds.
 */
async function changeVersion(
  config: Config,
  request: Requester & { id: string },
  action: 'withdraw' | 'restore' | 'edit',
  now: Date,
  decide: (record: PluginVersionRecord, version: CatalogVersion) => Decision,
) {
  const { id } = request;
  const actor = actorOf(request.by, request.tokenId);
  const stored = await readRecord(config.dataDir, id);
  const first = decide(stored.record, stored.version);
  if ('nothingToDo' in first) {
    console.error(`depot ${action}: ${first.nothingToDo}; nothing changed`);
    return { id, unchanged: true };
  }
  let written: Revision | undefined;
  let told = 0;
  const change = async (catalog: Catalog): Promise<Catalog> => {
    const served = catalog.byId.get(id);
    if (!served) throw new RefusedError(`${id} is not in the served catalog; run npm run build, then try again`);
    const { sha512, changelog: servedChangelog, ...record } = served;
    const decision = decide(record, served);
    if ('nothingToDo' in decision) throw new RefusedError(`${decision.nothingToDo} (changed meanwhile)`);
    const next = revisedRecord(decision.record, now);
    const revised = catalogVersion(next, sha512, decision.changelog ?? servedChangelog);
    const changed = createCatalog(
      catalog.versions.map((version) => (version.id === id ? revised : version)),
      [...catalog.users.values()],
    );
    // Announcements first, as a release's: sent once the change is served, never lost to a crash after its record.
    const announced = decision.announce
      ? await enqueueWebhooks(
          config,
          { ...decision.announce, version: presentVersion(changed, revised, true) },
          now.getTime(),
        )
      : { told: 0, cancel: async () => {} };
    try {
      const recordText = `${JSON.stringify(next, null, 2)}\n`;
      await commitVersionChange(config.dataDir, { id, recordText, changelog: decision.changelog });
    } catch (error) {
      await announced.cancel();
      throw error;
    }
    written = { ...decision, record: next };
    told = announced.told;
    // The publishing API waits for this line, then for its origin to serve the record.
    console.error(`${WRITTEN_LINE} ${id} ${next.updatedAt}`);
    return changed;
  };
  await runBuild({ ...config, cacheDir: config.buildCacheDir, change, log: (line) => console.error(line) });
  if (told > 0)
    console.error(
      `[webhooks] ${told} deliveries written to the outbox, sent by the origins once they serve the ${action}`,
    );
  await auditChange(config, { action, target: id, actor, changes: written!.changes });
  return written!.record;
}

/** A revised record as data/ holds it: checked, its keys in the schema's order, updatedAt now. */
function revisedRecord(record: PluginVersionRecord, now: Date): PluginVersionRecord {
  const parsed = PluginVersionRecord.safeParse({ ...record, updatedAt: now.toISOString() });
  if (!parsed.success) throw new RefusedError(parsed.error.issues.map((issue) => issue.message).join('; '));
  return parsed.data;
}

/** The record of `id` in data/ and the version it makes (its changelog included), or a refusal naming the id. */
async function readRecord(dataDir: string, id: string) {
  const file = recordPath(dataDir, id);
  const raw = await readJsonFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT')
      throw new RefusedError(`no version ${id} in ${versionsDir(dataDir)} (GET /api/plugin-versions lists them)`, {
        kind: 'unknown-version',
      });
    throw error;
  });
  const record = parseFile(PluginVersionRecord, raw, file);
  const changelog = await readChangelogIfAny(changelogPath(dataDir, id));
  return { record, version: catalogVersion(record, '', changelog) };
}

function readChangelogIfAny(file: string): Promise<string | undefined> {
  return readChangelog(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    if (error instanceof DataError) throw new RefusedError(escapeForbidden(error.message));
    throw error;
  });
}
