import { H3, type H3Event } from 'h3';
import { CACHE_CONTROL, NOT_FOUND_HEADERS, PUBLIC_HEADERS } from '../http/cache.ts';
import { readValidatedJsonBody, requireJsonType, sendDocument } from '../http/json.ts';
import { MEDIA_TYPES } from '../http/media-types.ts';
import { sendRepresentation } from '../http/send.ts';
import { validateNamedParams, validateQuery } from '../http/validate.ts';
import type { Catalog } from './catalog.ts';
import { VERSION_RULES, VERSIONS_ROOT } from './paths.ts';
import { requireLatest } from './require-latest.ts';
import { ChannelQuery, SoftwarePath } from './schema.ts';
import { findUpdates } from './update-lookup.ts';
import { UpdateLookupBody } from './update-lookup-schema.ts';

/** What the updater routes read: the tree's catalog, and the public URL the file links start with. */
export type UpdaterRouteDeps = { tree: () => { catalog: Catalog }; publicUrl: string };

/** A body's example in the 400 for one that is not JSON. */
const LOOKUP_SHAPE =
  '{"hashes": ["<sha512 hex>"], "algorithm": "sha512", "loaders": ["paper"], "game_versions": ["1.21.4"]}';

/**
 * Issue 31: the answers existing updater libraries read, mounted at /api/plugin-versions beside
 * versionRoutes: the latest plugin version as plain text, and Modrinth's hash-based update lookup.
 */
export function updaterRoutes(ctx: UpdaterRouteDeps): H3 {
  const app = new H3();
  const latestText = async (event: H3Event) => {
    // As the JSON latest validates: the channel (400), then the software and Java version (404).
    const channel = (await validateQuery(event, ChannelQuery)).channel ?? 'release';
    const { software, java } = await validateNamedParams(event, SoftwarePath, NOT_FOUND_HEADERS);
    const version = requireLatest(ctx.tree().catalog, software, java, channel);
    // No trailing newline: libraries that compare the body as it is (`equals`) read it as those
    // that trim it or read its first line do.
    return sendDocument(event, version.pluginVersion, MEDIA_TYPES.txt, CACHE_CONTROL.latest);
  };
  app.get(VERSION_RULES.latestText.under(VERSIONS_ROOT), latestText);
  app.get(VERSION_RULES.latestTextOnJava.under(VERSIONS_ROOT), latestText);
  app.post(VERSION_RULES.byHashUpdate.under(VERSIONS_ROOT), async (event) => {
    requireJsonType(event, `Send the lookup as JSON (Content-Type: application/json): ${LOOKUP_SHAPE}`);
    const body = await readValidatedJsonBody(event, UpdateLookupBody, LOOKUP_SHAPE);
    const bytes = new TextEncoder().encode(JSON.stringify(findUpdates(ctx.tree().catalog, body, ctx.publicUrl)));
    return sendRepresentation(event, {
      status: 200,
      headers: {
        'content-type': MEDIA_TYPES.json,
        'cache-control': CACHE_CONTROL.postedLookup,
        ...PUBLIC_HEADERS,
      },
      size: bytes.length,
      body: bytes,
    });
  });
  return app;
}
