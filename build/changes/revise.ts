import { readFile } from 'node:fs/promises';
import type { Config } from '../../server/config.ts';
import { DataError, parseFile, readJsonFile } from '../../server/data-files.ts';
import { escapeForbidden } from '../../server/free-text.ts';
import type { ReviseRequest } from '../../server/publish/change-requests.ts';
import { catalogVersion } from '../../server/versions/catalog-version.ts';
import {
  changelogPath,
  createCatalog,
  jarPath,
  readChangelog,
  recordPath,
  type Catalog,
} from '../../server/versions/catalog.ts';
import { channelOf } from '../../server/versions/channels.ts';
import { readClassFiles, type ClassFiles } from '../../server/versions/class-files.ts';
import { runsOnJava, type JavaVersion as JavaName } from '../../server/versions/java.ts';
import { PluginVersionRecord, type CatalogVersion } from '../../server/versions/schema.ts';
import { presentVersion } from '../../server/versions/present.ts';
import type { AuditAction } from '../../server/audit/schema.ts';
import { commitVersionChange } from '../version-commit.ts';
import { runBuild } from '../build.ts';
import { actorOf, auditChange, auditedScopes } from './audit.ts';
import { RefusedError } from './refused.ts';
import { checkJava } from './java.ts';
import { enqueueWebhooks } from './announce.ts';
import { minecraftFields, readRequestedChangelog } from './release.ts';
import { ON_STDERR, type Progress } from './progress.ts';

/**
 * Issue 29: withdraw, restore and edit a released version; issue 41: any of them together, as one
 * change. It rewrites the version's record (and, for an edit, its changelog) and is served first
 * like a release: the same build, its delta tree carrying the change before the answers that read
 * it are rendered again. The JAR, its id, size, digests and createdAt never change; updatedAt does.
 */

/** One part of a revision, as the audit log records it. */
type Step = { action: Extract<AuditAction, 'edit' | 'withdraw' | 'restore'>; changes: Record<string, unknown> };

/**
 * A version's record after a revision, its changelog (undefined: as it was), what the audit log
 * records of each part, and for a withdrawal the reason its webhooks announce.
 */
type Revision = {
  record: PluginVersionRecord;
  changelog?: string;
  steps: Step[];
  announce?: { event: 'withdraw'; reason: string };
};

/** What a revision decides of a version as it stands: the revision, or why there is nothing to do (exit 0). */
type Decision = Revision | { nothingToDo: string };

/** What a request's label is in its lines: the CLI's command, or `change` for several at once. */
type Label = 'withdraw' | 'restore' | 'edit' | 'change';

/**
 * Revises a version: every part of the request is decided against the record before anything is
 * written, so a refused part (restoring what is not withdrawn) leaves the version as it was; then
 * all parts are written as one record, its commit audited before the build serves it.
 */
export async function revise(
  request: ReviseRequest,
  config: Config,
  now: Date,
  progress: Progress = ON_STDERR,
  label: Label = 'change',
) {
  const changelog = await readRequestedChangelog(request.changelog);
  // The JAR never changes: its class files are read once, before the change is decided.
  const classes = request.java === undefined ? undefined : await readJarClasses(config.dataDir, request.id);
  const decide = (record: PluginVersionRecord, version: CatalogVersion) =>
    decideRevision({ ...request, changelog }, record, version, now, classes);
  return changeVersion(config, request, label, now, decide, progress);
}

function decideRevision(
  request: Omit<ReviseRequest, 'changelog'> & { changelog: string | undefined },
  record: PluginVersionRecord,
  version: CatalogVersion,
  now: Date,
  classes: ClassFiles | undefined,
): Decision {
  const { channel, changelog, minecraft, proxy, java, withdrawn } = request;
  const steps: Step[] = [];
  const nothing: string[] = [];
  let revised = record;
  let newChangelog: string | undefined;
  if ([channel, changelog, minecraft, proxy, java].some((value) => value !== undefined)) {
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
    if (Object.keys(changes).length === 0) nothing.push(`${record.id} already has what the edit asks`);
    else {
      revised = edited;
      newChangelog = changelog;
      steps.push({ action: 'edit', changes });
    }
  }
  let announce: Revision['announce'];
  if (withdrawn === null) {
    if (!revised.withdrawn)
      throw new RefusedError(`${record.id} is not withdrawn; nothing to restore (withdraw it with depot withdraw)`, {
        kind: 'conflict',
      });
    const { withdrawn: was, ...restored } = revised;
    revised = restored;
    steps.push({ action: 'restore', changes: { withdrawnReason: was.reason } });
  } else if (withdrawn) {
    const { reason } = withdrawn;
    if (revised.withdrawn)
      nothing.push(`${record.id} is already withdrawn (${JSON.stringify(revised.withdrawn.reason)})`);
    else {
      revised = { ...revised, withdrawn: { reason, at: now.toISOString(), by: request.by ?? 'operator' } };
      steps.push({ action: 'withdraw', changes: { reason } });
      announce = { event: 'withdraw', reason };
    }
  }
  if (steps.length === 0) return { nothingToDo: nothing.join('; ') };
  return {
    record: revised,
    ...(newChangelog === undefined ? {} : { changelog: newChangelog }),
    steps,
    ...(announce ? { announce } : {}),
  };
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
    if (error.code === 'ENOENT') throw unknownVersion(id);
    throw error;
  });
  return readClassFiles(bytes);
}

const unknownVersion = (id: string) =>
  new RefusedError(`no version ${id} in data/versions (GET /api/plugin-versions lists them)`, {
    kind: 'unknown-version',
  });

/**
 * Decides the change against the version's record in data/ (nothing to do, or a refusal, leaves
 * data/ and the served tree as they were), then again under the build lock, where no other change
 * runs: writes its changelog, then its record (the commit point), audits it, and builds.
 */
async function changeVersion(
  config: Config,
  request: ReviseRequest,
  label: Label,
  now: Date,
  decide: (record: PluginVersionRecord, version: CatalogVersion) => Decision,
  progress: Progress,
) {
  const { id } = request;
  const actor = actorOf(request.by);
  const stored = await readRecord(config.dataDir, id);
  const first = decide(stored.record, stored.version);
  if ('nothingToDo' in first) {
    progress.log(`depot ${label}: ${first.nothingToDo}; nothing changed`);
    return { id, unchanged: true };
  }
  let written: Revision | undefined;
  let told = 0;
  const change = async (catalog: Catalog): Promise<Catalog> => {
    const served = catalog.byId.get(id);
    if (!served) throw new RefusedError(`${id} is not in the served catalog; run npm run build, then try again`);
    // Decided against data/ as committed, not as served: a change committed whose build then failed
    // (a full disk) is what its audit record says, and this change keeps it (the build serves both).
    const committed = await readRecord(config.dataDir, id);
    const decision = decide(committed.record, committed.version);
    if ('nothingToDo' in decision) throw new RefusedError(`${decision.nothingToDo} (changed meanwhile)`);
    const next = revisedRecord(decision.record, now);
    const revised = catalogVersion(next, served.sha512, decision.changelog ?? committed.version.changelog);
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
    // Audited with the commit, before any answer: a change answered 2xx is in the audit log.
    for (const step of decision.steps)
      await auditChange(config, {
        ...step,
        changes: { ...step.changes, ...auditedScopes(request) },
        target: id,
        actor,
        tokenId: request.tokenId,
      });
    written = { ...decision, record: next };
    told = announced.told;
    progress.written({ id, updatedAt: next.updatedAt });
    return changed;
  };
  await runBuild({ ...config, cacheDir: config.buildCacheDir, change, log: progress.log });
  if (told > 0)
    progress.log(
      `[webhooks] ${told} deliveries written to the outbox, sent by the origins once they serve the ${label}`,
    );
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
    if (error.code === 'ENOENT') throw unknownVersion(id);
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
