import { mkdir, rm, writeFile } from 'node:fs/promises';
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import { chargeLimit } from '../http/rate-limit.ts';
import { refuseUnrouted } from '../http/endpoints.ts';
import { ENDPOINTS } from '../endpoints.ts';
import { H3, HTTPError, getRouterParam, type H3Event } from 'h3';
import { readValidatedJsonBody } from '../http/json.ts';
import type { Catalog } from '../versions/catalog.ts';
import { VERSION_RULES } from '../versions/paths.ts';
import { presentVersion } from '../versions/present.ts';
import { ChangelogMarkdown, PLUGIN_VERSION_ID } from '../versions/schema.ts';
import type { PublishTokenStore } from '../publish-tokens/contract.ts';
import { authenticatePublisher, type Publisher } from './auth.ts';
import { parsePublishMetadata } from './metadata.ts';
import { runDepot, type Written } from './run-depot.ts';
import { receiveUpload } from './upload.ts';
import { PublishPatch } from './patch.ts';
import type { Publishing } from './publishing.ts';
import { idempotencyKeyOf, type IdempotencyStore } from '../charts/idempotency.ts';

export type PublishRouteDeps = {
  tree: () => { catalog: Catalog; dir: string };
  /** Idempotency-Key, as on ingestion: per user, 24 hours. */
  idempotency: IdempotencyStore;
  publishTokens: PublishTokenStore;
  /** null: PUBLISH=off, answered 503 naming the setting. */
  publishing: Publishing | null;
  now: () => number;
};

/** A refused request's body up to this size is read and dropped before the answer (admit). */
const DRAINED_BODY_BYTES = 1024 * 1024;

/** How long an answer waits for this origin to serve what was written (its tree follows within milliseconds). */
const SERVED_WITHIN_MS = 30_000;

/**
 * Issue 30: `POST /api/plugin-versions` (a release) and `PATCH /api/plugin-versions/<id>` (edit,
 * withdraw, restore), each answered once this origin serves the change. Both run the operator CLI
 * (run-depot.ts) with the token's user as `--by`: the same code path and the same refusals.
 */
export function publishRoutes(deps: PublishRouteDeps): H3 {
  const app = new H3();
  app.post(VERSION_RULES.list.pattern, async (event) => {
    const { publishing, publisher } = await admit(deps, event);
    const idempotencyKey = idempotencyKeyOf(event);
    await mkdir(publishing.uploadsDir, { recursive: true, mode: 0o700 });
    const upload = await receiveUpload(event, { maxBytes: publishing.maxBytes, dir: publishing.uploadsDir });
    const notes = changelogFile(publishing);
    try {
      parsePublishMetadata(upload.metadata);
      const raw = upload.metadata as Record<string, unknown>;
      if (typeof raw.changelog === 'string') await writeChangelog(notes, raw.changelog);
      const args = ['release', upload.path, `--file-name=${upload.fileName}`, ...releaseOptions(raw, notes)];
      let written: Written | null = null;
      let finished: Promise<unknown> | undefined;
      const release = async () => {
        const run = runDepot([...args, ...actorOptions(publisher)], publishing.logs);
        finished = run.finished;
        written = await run.written;
      };
      if (idempotencyKey === null) await release();
      else {
        // A retry after a lost answer (same key, same file and metadata) answers the release it made.
        const request = `${upload.sha256} ${JSON.stringify(raw)}`;
        const scope = `publish:${publisher.username}`;
        const outcome = await deps.idempotency.once(scope, idempotencyKey, request, release, deps.now());
        if (outcome === 'replayed') {
          event.res.headers.set('idempotent-replayed', 'true');
          written = releasedBefore(deps, upload.sha256);
        } else if (outcome !== 'stored') throw idempotencyRefusal(outcome);
      }
      const { catalog, version } = await served(deps, written!);
      const deploy = await deployServed(publishing, publisher, finished ? [finished] : []);
      event.res.status = 201;
      event.res.headers.set('location', VERSION_RULES.version.build({ id: version.id }));
      return { version: presentVersion(catalog, version, true), ...deploy };
    } finally {
      await Promise.all([upload.remove(), rm(notes, { force: true })]);
    }
  });
  app.patch(VERSION_RULES.version.pattern, async (event) => {
    const id = getRouterParam(event, 'id', { decode: true }) ?? '';
    // A segment that is no id (`downloads`, `latest`) is another endpoint or none: 405 or 404, as unrouted.
    if (!PLUGIN_VERSION_ID.test(id)) refuseUnrouted(ENDPOINTS, event);
    const { publishing, publisher } = await admit(deps, event);
    const patch = await readPatch(event);
    let last: Written | null = null;
    const finished: Promise<unknown>[] = [];
    for (const args of patchCommands(id, patch, changelogFile(publishing))) {
      const run = await runCommand(args.command, [...args.args, ...actorOptions(publisher)], publishing, args.notes);
      finished.push(run.finished);
      last = run.written ?? last;
    }
    const { catalog, version } = last ? await served(deps, last) : current(deps, id);
    const deploy = last ? await deployServed(publishing, publisher, finished) : {};
    return { version: presentVersion(catalog, version, true), ...deploy };
  });
  return app;
}

/**
 * PUBLISH=off: 503 naming the setting; else the token's publisher (401, 400 for a token in the URL).
 * Refused before the body is read: a small body is read and dropped first, so the client, still
 * sending it, gets the answer rather than a reset; a larger one (or one of unknown length) is cut
 * off and the connection closed after the answer.
 */
async function admit(deps: PublishRouteDeps, event: H3Event) {
  try {
    if (!deps.publishing)
      throw new HTTPError({
        status: 503,
        message: 'This origin does not publish (PUBLISH=off): send publishing requests to the origin that holds data/',
        headers: { 'retry-after': '60' },
      });
    // Charged by the rate limit only when it fails (x-rate-limit: failures-only): a refused token counts, a publish does not.
    return {
      publishing: deps.publishing,
      publisher: await authenticatePublisher(deps.publishTokens, event, deps.now()),
    };
  } catch (refused) {
    // Charged now: over the limit, a refused token is answered 429 like any request, not 401 again.
    const error = await chargeLimit(event).then(
      () => refused,
      (limit: unknown) => limit,
    );
    if (!(error instanceof HTTPError)) throw error;
    const length = Number(event.req.headers.get('content-length') ?? NaN);
    if (
      length <= DRAINED_BODY_BYTES &&
      (await event.req.arrayBuffer().then(
        () => true,
        () => false,
      ))
    )
      throw error;
    const headers = { ...Object.fromEntries(error.headers ?? []), connection: 'close' };
    throw new HTTPError({ status: error.status, message: error.message, data: error.data, headers });
  }
}

/**
 * The CLI's `--changelog` file: a name the leftover sweep knows (writeFileAtomic's `.tmp-<pid>-<n>`,
 * as the upload's), so a kill -9 before it is removed leaves nothing once this pid is gone.
 */
const changelogFile = (publishing: Publishing) =>
  join(publishing.uploadsDir, `changelog.md.tmp-${process.pid}-${randomInt(2 ** 47)}`);

/** `--by` and `--token-id`: records carry the token's user, the audit log names the token too. */
const actorOptions = (publisher: Publisher) => [`--by=${publisher.username}`, `--token-id=${publisher.tokenId}`];

/** The release's options from metadata that parsePublishMetadata accepted (`--x=value`: a value may start with `-`). */
function releaseOptions(raw: Record<string, unknown>, notes: string): string[] {
  const options = [
    '--metadata',
    `--version=${String(raw.pluginVersion)}`,
    `--software=${(raw.serverSoftware as string[]).join(',')}`,
  ];
  if (raw.javaVersion !== undefined) options.push(`--java=${String(raw.javaVersion)}`);
  if (typeof raw.minecraftVersions === 'string') options.push(`--minecraft=${raw.minecraftVersions}`);
  if (typeof raw.proxyVersion === 'string') options.push(`--proxy=${raw.proxyVersion}`);
  if (typeof raw.channel === 'string') options.push(`--channel=${raw.channel}`);
  if (typeof raw.changelog === 'string') options.push(`--changelog=${notes}`);
  if (raw.descriptorCheck === false) options.push('--no-descriptor-check');
  return options;
}

/** A PATCH body: JSON (415 otherwise), checked (400 naming the field). */
async function readPatch(event: H3Event): Promise<PublishPatch> {
  const type = event.req.headers.get('content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type))
    throw new HTTPError({ status: 415, message: 'Send the changes as JSON (Content-Type: application/json)' });
  return readValidatedJsonBody(
    event,
    PublishPatch,
    '{"channel": "beta"}, {"withdrawn": {"reason": "..."}} or {"withdrawn": null}',
    { namesField: true },
  );
}

type Command = { command: string; args: string[]; notes?: { path: string; text: string } };

/** The CLI commands a PATCH asks for: an edit of what it names, then a withdrawal or a restore. */
function patchCommands(id: string, patch: PublishPatch, notes: string): Command[] {
  const commands: Command[] = [];
  const edit = [
    ...(patch.channel === undefined ? [] : [`--channel=${patch.channel}`]),
    ...(patch.minecraftVersions === undefined ? [] : [`--minecraft=${patch.minecraftVersions}`]),
    ...(patch.proxyVersion === undefined ? [] : [`--proxy=${patch.proxyVersion}`]),
    ...(patch.javaVersion === undefined ? [] : [`--java=${patch.javaVersion}`]),
    ...(patch.changelog === undefined ? [] : [`--changelog=${notes}`]),
  ];
  if (edit.length > 0)
    commands.push({
      command: 'edit',
      args: [id, ...edit],
      ...(patch.changelog === undefined ? {} : { notes: { path: notes, text: patch.changelog } }),
    });
  if (patch.withdrawn === null) commands.push({ command: 'restore', args: [id] });
  else if (patch.withdrawn) commands.push({ command: 'withdraw', args: [id, `--reason=${patch.withdrawn.reason}`] });
  return commands;
}

/**
 * One command run to its written record (null: it changed nothing) and its whole run, its changelog
 * file written first and removed once the record is written.
 */
async function runCommand(command: string, args: string[], publishing: Publishing, notes?: Command['notes']) {
  if (notes) {
    await mkdir(publishing.uploadsDir, { recursive: true, mode: 0o700 });
    await writeChangelog(notes.path, notes.text);
  }
  try {
    const run = runDepot([command, ...args], publishing.logs);
    return { written: await run.written, finished: run.finished };
  } finally {
    if (notes) await rm(notes.path, { force: true });
  }
}

/**
 * A changelog handed to the CLI as its `--changelog` file, checked first as the CLI checks one (400
 * naming `changelog`): a JSON string may hold a lone surrogate, which writing it as UTF-8 would
 * silently turn into U+FFFD.
 */
async function writeChangelog(path: string, markdown: string): Promise<void> {
  const parsed = ChangelogMarkdown.safeParse(markdown);
  if (!parsed.success)
    throw new HTTPError({
      status: 400,
      message: `changelog: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`,
      data: { field: 'changelog' },
    });
  await writeFile(path, markdown, { mode: 0o600 });
}

/** The version as this origin serves it once it shows what was written; 500 if it does not in time. */
async function served(deps: PublishRouteDeps, written: Written) {
  const deadline = Date.now() + SERVED_WITHIN_MS;
  for (;;) {
    const { catalog } = deps.tree();
    const version = catalog.byId.get(written.id);
    if (version && (written.updatedAt === undefined || version.updatedAt === written.updatedAt))
      return { catalog, version };
    if (Date.now() > deadline)
      throw new HTTPError({
        status: 500,
        message: `${written.id} is written to data/, but this origin does not serve it yet; see the origin's log`,
      });
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * AFTER_SWAP, run on the tree served once the change is (the answer waits for it and says how it
 * went: `deploy: {ok, exitCode}`), and again once the commands have finished if their full build
 * swapped in a later tree (after the answer). Nothing when it is not set.
 */
async function deployServed(publishing: Publishing, publisher: Publisher, finished: Promise<unknown>[]) {
  if (!publishing.deploys) return {};
  const actor = `${publisher.username} (token ${publisher.tokenId})`;
  const deploy = await publishing.deploys.run(actor);
  publishing.deploys.follow(Promise.allSettled(finished), actor);
  return { deploy };
}

/** The version a replayed Idempotency-Key released: the one with these bytes. */
function releasedBefore(deps: PublishRouteDeps, sha256: string): Written {
  const version = deps.tree().catalog.versions.find((v) => v.sha256 === sha256);
  if (!version)
    throw new HTTPError({ status: 404, message: 'The release this Idempotency-Key made is no longer served' });
  return { id: version.id, updatedAt: undefined };
}

/** Why a keyed publish did not run now: the key came with another upload, is still running, or the day's keys are used up. */
function idempotencyRefusal(outcome: 'conflict' | 'in-progress' | 'capped'): HTTPError {
  if (outcome === 'conflict')
    return new HTTPError({
      status: 422,
      message: 'Idempotency-Key was used with another file or metadata in the last 24 hours; send a new key',
    });
  if (outcome === 'in-progress')
    return new HTTPError({
      status: 409,
      message: 'A publish with this Idempotency-Key is still running; retry after Retry-After seconds',
      headers: { 'retry-after': '1' },
    });
  return new HTTPError({ status: 429, message: 'Idempotency-Key limit reached for today; retry after midnight UTC' });
}

/** The version as served now (a PATCH that changed nothing), or 404. */
function current(deps: PublishRouteDeps, id: string) {
  const { catalog } = deps.tree();
  const version = catalog.byId.get(id);
  if (!version) throw new HTTPError({ status: 404, message: `No plugin version with id ${JSON.stringify(id)}` });
  return { catalog, version };
}
