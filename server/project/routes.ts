import { H3, type H3Event } from 'h3';
import type { ByteCache } from '../byte-cache.ts';
import { CACHE_CONTROL, PUBLIC_HEADERS } from '../http/cache.ts';
import { notFound } from '../http/errors.ts';
import { sendJson } from '../http/json.ts';
import { isNotModified, sendRepresentation } from '../http/send.ts';
import type { FileCache } from '../http/file-cache.ts';
import { CONTENT_TYPES, ENCODER_REVISION } from '../brands/formats.ts';
import type { ImageRenderer } from '../brands/render.ts';
import { sourceFile } from '../brands/source-record.ts';
import { sha256Hex } from '../helpers/digest.ts';
import { PROJECT_RULES, projectIconPath } from './paths.ts';
import { presentProject } from './present.ts';
import { ICON_SIZES, type IconSize, type ProjectIcon, type ProjectRecord } from './schema.ts';

/** What the project routes read: the tree's project and precomputed files, the render cache, and sharp. */
export type ProjectRouteDeps = {
  tree: () => {
    dir: string;
    readonly project?: ProjectRecord | undefined;
    routes: { get(path: string): { file: string } | undefined };
  };
  files: Pick<FileCache, 'read'>;
  imageCache: ByteCache;
  renderer: Pick<ImageRenderer, 'render'>;
};

const NO_PROJECT = 'This depot has no data/project.json';

/** GET /api/project, and the icon's renditions (PNG, square, at ICON_SIZES). */
export function projectRoutes(ctx: ProjectRouteDeps): H3 {
  const app = new H3();
  app.get(PROJECT_RULES.project.pattern, (event) => {
    const { project } = ctx.tree();
    if (!project) throw notFound(NO_PROJECT);
    return sendJson(event, presentProject(project), CACHE_CONTROL.project);
  });
  app.get(PROJECT_RULES.icon.pattern, async (event) => {
    const size = Number(event.context.params?.size);
    const icon = ctx.tree().project?.icon;
    if (!icon) throw notFound(`${NO_PROJECT} icon`);
    if (!(ICON_SIZES as readonly number[]).includes(size))
      throw notFound(`No icon at ${event.url.pathname}: the sizes are ${ICON_SIZES.join(', ')}`);
    return answerIcon(ctx, event, icon, size as IconSize);
  });
  return app;
}

/** The rendition: its ETag known from its inputs, its bytes precomputed, cached, or rendered by the brand pipeline. */
async function answerIcon(ctx: ProjectRouteDeps, event: H3Event, icon: ProjectIcon, size: IconSize) {
  const key = sha256Hex(`project-icon|${icon.sha256}|${size}|png|${ENCODER_REVISION}`);
  const headers = {
    'content-type': CONTENT_TYPES.png,
    'cache-control': CACHE_CONTROL.brandResized,
    etag: `"${key}"`,
    ...PUBLIC_HEADERS,
  };
  if (isNotModified(event.req, headers.etag))
    return sendRepresentation(event, { status: 200, headers, size: 0, body: new Uint8Array(0) });
  const tree = ctx.tree();
  const precomputed = tree.routes.get(projectIconPath(size));
  let bytes = precomputed ? await ctx.files.read(tree.dir, precomputed.file) : await ctx.imageCache.get(key);
  if (!bytes) {
    const source = { ...icon, bytes: await ctx.files.read(tree.dir, sourceFile(icon)) };
    bytes = await ctx.renderer.render(source, { size, format: 'png' }, 'light');
    await ctx.imageCache.set(key, bytes, 3600);
  }
  return sendRepresentation(event, { status: 200, headers, size: bytes.length, body: bytes });
}
