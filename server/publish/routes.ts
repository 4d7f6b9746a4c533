import { mkdir } from 'node:fs/promises';
import { chargeLimit } from '../http/rate-limit.ts';
import { refuseUnrouted, type EndpointTable } from '../http/endpoints.ts';
import { H3, HTTPError, getRouterParam, type H3Event } from 'h3';
import { readValidatedJsonBody, requireJsonType } from '../http/json.ts';
import type { Catalog } from '../versions/catalog.ts';
import type { CatalogVersion } from '../versions/schema.ts';
import { VERSION_RULES } from '../versions/paths.ts';
import { presentVersion } from '../versions/present.ts';
import { PLUGIN_VERSION_ID } from '../versions/schema.ts';
import type { PublishTokenStore } from '../publish-tokens/store/contract.ts';
import { authenticatePublisher, requireScope, type Publisher } from './auth.ts';
import { parsePublishMetadata } from './metadata.ts';
import type { Written } from './worker-messages.ts';
import { MinecraftOption, type ReviseRequest } from './change-requests.ts';
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
  /** The service's endpoint table (server/endpoints.ts), handed in by app.ts: a PATCH on no id is answered as unrouted. */
  endpoints: EndpointTable;
};

/** A refused request's body up to this size is read and dropped before the answer (admit). */
const DRAINED_BODY_BYTES = 1024 * 1024;

/** How long an answer waits for this origin to serve what was written (its tree follows within milliseconds). */
const SERVED_WITHIN_MS = 30_000;

/**
 * Issue 30: `POST /api/plugin-versions` (a release) and `PATCH /api/plugin-versions/<id>` (edit,
 * withdraw, restore), each answered once this origin serves the change. Both make the change as the
 * CLI does (build/changes/, in the build worker) with the token's user as its author: the same code
 * and the same refusals.
 */
export function publishRoutes(deps: PublishRouteDeps): H3 {
  const app = new H3();
  app.post(VERSION_RULES.list.pattern, async (event) => {
    const { publishing, publisher } = await admit(deps, event);
    requireScope(publisher, 'publish');
    const idempotencyKey = idempotencyKeyOf(event);
    await mkdir(publishing.uploadsDir, { recursive: true, mode: 0o700 });
    const upload = await receiveUpload(event, { maxBytes: publishing.maxBytes, dir: publishing.uploadsDir });
    try {
      const metadata = parsePublishMetadata(upload.metadata);
      const request = { ...metadata, file: upload.path, fileName: upload.fileName, ...requester(publisher) };
      let written: Written | null = null;
      let finished: Promise<unknown> | undefined;
      const release = async () => {
        const run = publishing.changes.run({ command: 'release', request });
        finished = run.finished;
        written = await run.written;
      };
      let replayed = false;
      if (idempotencyKey === null) await release();
      else {
        // A retry after a lost answer (same key, same file and metadata) answers the release it made.
        const key = `${upload.sha256} ${JSON.stringify(upload.metadata)}`;
        const scope = `publish:${publisher.username}`;
        const outcome = await deps.idempotency.once(scope, idempotencyKey, key, release, deps.now());
        if (outcome !== 'stored' && outcome !== 'replayed') throw idempotencyRefusal(outcome);
        replayed = outcome === 'replayed';
        if (replayed) event.res.headers.set('idempotent-replayed', 'true');
      }
      const { catalog, version } = replayed
        ? await releasedBefore(deps, publishing, upload.sha256)
        : await served(deps, publishing, written!, finished!);
      const deploy = await deployServed(publishing, publisher, finished ? [finished] : []);
      event.res.status = 201;
      event.res.headers.set('location', VERSION_RULES.version.build({ id: version.id }));
      return { version: presentVersion(catalog, version, true), ...deploy };
    } finally {
      await upload.remove();
    }
  });
  app.patch(VERSION_RULES.version.pattern, async (event) => {
    const id = getRouterParam(event, 'id', { decode: true }) ?? '';
    // A segment that is no id (`downloads`, `latest`) is another endpoint or none: 405 or 404, as unrouted.
    if (!PLUGIN_VERSION_ID.test(id)) refuseUnrouted(deps.endpoints, event);
    const { publishing, publisher } = await admit(deps, event);
    const patch = await readPatch(event);
    mayChange(deps, publisher, id, patch);
    // Every field and the withdrawn state are decided before anything is written, and written as one change.
    const run = publishing.changes.run({ command: 'revise', request: reviseRequest(id, patch, publisher) });
    const written = await run.written;
    const { catalog, version } = written ? await served(deps, publishing, written, run.finished) : current(deps, id);
    const deploy = written ? await deployServed(publishing, publisher, [run.finished]) : {};
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

/** Who asks: the token's user (records carry it), and the token and its scopes (the audit log names them). */
const requester = (publisher: Publisher) => ({
  by: publisher.username,
  tokenId: publisher.tokenId,
  tokenScopes: publisher.scopes,
});

/**
 * 403 unless the token may make this PATCH: `edit` for what the JAR does not fix, `withdraw` for
 * `withdrawn`, and a version its user released unless it was made with --any-version.
 */
function mayChange(deps: PublishRouteDeps, publisher: Publisher, id: string, patch: PublishPatch): void {
  const { withdrawn, ...edits } = patch;
  if (Object.keys(edits).length > 0) requireScope(publisher, 'edit');
  if (withdrawn !== undefined) requireScope(publisher, 'withdraw');
  const version = deps.tree().catalog.byId.get(id);
  if (!version || publisher.anyVersion || version.createdBy === publisher.username) return;
  throw new HTTPError({
    status: 403,
    message: `This token changes only the versions ${publisher.username} released, and ${id} is not one; an operator makes a token that changes any with depot token add ${publisher.username} --any-version`,
  });
}

/** A PATCH body: JSON (415 otherwise), checked (400 naming the field). */
async function readPatch(event: H3Event): Promise<PublishPatch> {
  requireJsonType(event, 'Send the changes as JSON (Content-Type: application/json)');
  return readValidatedJsonBody(
    event,
    PublishPatch,
    '{"channel": "beta"}, {"withdrawn": {"reason": "..."}} or {"withdrawn": null}',
    { namesField: true },
  );
}

/** A PATCH as the revision it asks for: the fields it names, parsed, and its withdrawn state. */
function reviseRequest(id: string, patch: PublishPatch, publisher: Publisher): ReviseRequest {
  const { minecraftVersions, proxyVersion, javaVersion, changelog, ...rest } = patch;
  return {
    id,
    ...rest,
    ...(changelog === undefined ? {} : { changelog: { markdown: changelog } }),
    ...(minecraftVersions === undefined ? {} : { minecraft: MinecraftOption.parse(minecraftVersions) }),
    ...(proxyVersion === undefined ? {} : { proxy: proxyVersion }),
    ...(javaVersion === undefined ? {} : { java: javaVersion }),
    ...requester(publisher),
  };
}

/**
 * The version as this origin serves it once it shows what was written (told by its tree follower).
 * A build that fails after the commit (a full disk) answers its own error at once; 500 if the
 * change is not served in time.
 */
function served(deps: PublishRouteDeps, publishing: Publishing, written: Written, finished: Promise<unknown>) {
  const notServed = new HTTPError({
    status: 500,
    message: `${written.id} is written to data/, but this origin does not serve it yet; see the origin's log`,
  });
  const find = (catalog: Catalog) => {
    const version = catalog.byId.get(written.id);
    return version && (written.updatedAt === undefined || version.updatedAt === written.updatedAt)
      ? version
      : undefined;
  };
  return servedWhen(deps, publishing, notServed, find, finished);
}

/**
 * The catalog and the version `find` picks from it, once a tree this origin serves has it;
 * `notServed` when none does in time, or the error of `finished` when the change's build fails first.
 */
async function servedWhen(
  deps: PublishRouteDeps,
  publishing: Publishing,
  notServed: HTTPError,
  find: (catalog: Catalog) => CatalogVersion | undefined,
  finished?: Promise<unknown>,
) {
  let failure: { error: unknown } | undefined;
  const failed = new Promise<void>((resolve) =>
    finished?.catch((error: unknown) => {
      failure = { error };
      resolve();
    }),
  );
  const deadline = Date.now() + SERVED_WITHIN_MS;
  for (;;) {
    const moved = publishing.nextTree();
    const { catalog } = deps.tree();
    const version = find(catalog);
    if (version) return { catalog, version };
    if (failure) throw failure.error;
    const left = deadline - Date.now();
    if (left <= 0) throw notServed;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([moved, failed, new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
    clearTimeout(timer);
  }
}

/**
 * AFTER_SWAP, run on the tree served once the change is (the answer waits for it and says how it
 * went: `deploy: {ok, exitCode}`), and again once the commands have finished if their full build
 * swapped in a later tree (after the answer). Nothing when it is not set.
 */
async function deployServed(publishing: Publishing, publisher: Publisher, finished: Promise<unknown>[]) {
  if (!publishing.deploys) return {};
  const by = { actor: publisher.username, tokenId: publisher.tokenId };
  const deploy = await publishing.deploys.run(by);
  publishing.deploys.follow(Promise.allSettled(finished), by);
  return { deploy };
}

/** The version a replayed Idempotency-Key released (the one with these bytes), once served: the first request may still be building. */
function releasedBefore(deps: PublishRouteDeps, publishing: Publishing, sha256: string) {
  const gone = new HTTPError({ status: 404, message: 'The release this Idempotency-Key made is no longer served' });
  return servedWhen(deps, publishing, gone, (catalog) => catalog.versions.find((v) => v.sha256 === sha256));
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
