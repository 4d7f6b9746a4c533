import { etagDigest } from '../server/http/etag.ts';
import pLimit from 'p-limit';
import { createApi } from '../server/app.ts';
import type { AppContext } from '../server/context.ts';
import type { RouteEntry } from '../server/tree/format.ts';
import type { EntryOrText } from '../server/tree/manifest-text.ts';
import { isCompressible } from '../server/http/compress.ts';
import { extensionFor } from '../server/http/media-types.ts';
import { storedTreeFile, writeTreeFile } from './tree-file.ts';
import type { FileStore } from './file-store.ts';
import { allOrFirstError } from '../server/helpers/settle.ts';
import { defaultChannelTwin } from './paths.ts';

/** Headers the static server computes per request rather than stores. */
const PER_REQUEST_HEADERS = new Set(['content-length', 'content-range']);

/**
 * Asks the same app the origin runs for each path and records status, headers and bytes. Bytes go to
 * files/<sha256>.<ext>: identical answers (a JAR behind several URLs) are stored once. Requests run a
 * few at a time (images render in parallel, bounded by the renderer); the manifest keeps path order.
 * The paths in `kept` (server/tree/previous.ts reusedAnswers) are not asked: their entries are taken as they are.
 */
export async function prerender(
  ctx: AppContext,
  store: FileStore,
  paths: readonly string[],
  progress: (done: number) => void,
  kept: ReadonlyMap<string, string>,
) {
  const api = createApi(ctx);
  const limit = pLimit(8);
  let done = kept.size;
  progress(done);
  const toAsk = paths.filter((path) => !kept.has(path));
  const asking = new Set(toAsk);
  // `?channel=release` is the default channel: such a path takes its twin's answer, asked once.
  const twinAsked = (path: string) => {
    const twin = defaultChannelTwin(path);
    return twin !== undefined && asking.has(twin) ? twin : undefined;
  };
  const asked = await allOrFirstError(
    toAsk
      .filter((path) => !twinAsked(path))
      .map((path) =>
        limit(async (): Promise<[string, RouteEntry]> => {
          const entry = await askApp(api, store, path);
          progress(++done);
          return [path, entry];
        }),
      ),
  );
  const answers = new Map(asked);
  for (const path of toAsk) {
    const twin = twinAsked(path);
    if (twin) answers.set(path, answers.get(twin)!);
  }
  progress(paths.length);
  // The manifest keeps the order of `paths`.
  const entries = paths.map((path) => [path, kept.get(path) ?? answers.get(path)!] as const);
  const reused = kept.size;
  const twins = toAsk.length - asked.length;
  return { routes: Object.fromEntries(entries) as Record<string, EntryOrText<RouteEntry>>, reused, twins };
}

/** The app's answer for `path`, its bytes in the store, as a manifest entry. */
async function askApp(api: ReturnType<typeof createApi>, store: FileStore, path: string): Promise<RouteEntry> {
  const response = await api.request(path);
  if (response.status >= 500) throw new Error(`prerender ${path}: ${response.status} ${await response.text()}`);
  const type = response.headers.get('content-type') ?? '';
  const ext = extensionFor(type);
  if (!ext)
    throw new Error(`prerender ${path}: unexpected content-type ${JSON.stringify(type)} (status ${response.status})`);
  const headers = Object.fromEntries([...response.headers].filter(([name]) => !PER_REQUEST_HEADERS.has(name)).sort());
  const compressible = isCompressible(type);
  // Every answer's strong ETag is the sha256 of its bytes: a file answer (a JAR, streamed with
  // its length) already in the store is not read and hashed again (megabytes per JAR route).
  const digest = etagDigest(headers.etag);
  const length = response.headers.get('content-length');
  const known =
    digest && length !== null ? storedTreeFile(store, digest, ext, Number(length), compressible) : undefined;
  if (known) await discardBody(response);
  const stored = known ?? (await writeTreeFile(store, new Uint8Array(await response.arrayBuffer()), ext, compressible));
  return { ...stored, status: response.status, headers };
}

/**
 * Drops an answer's body without reading it all. A file answer's stream opens its file at once;
 * cancelling it before its first read leaves that file open (undici starts reading, and so closing,
 * a stream body only on its first pull), so one chunk is read first.
 */
async function discardBody(response: Response): Promise<void> {
  const reader = response.body?.getReader();
  if (!reader) return;
  await reader.read();
  await reader.cancel();
}
