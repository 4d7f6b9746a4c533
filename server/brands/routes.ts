import { H3, HTTPError, getValidatedRouterParams, type H3Event } from 'h3';
import type { z } from 'zod';
import type { ByteCache } from '../byte-cache.ts';
import { CACHE_CONTROL, PUBLIC_HEADERS, SVG_SECURITY_POLICY } from '../http/cache.ts';
import { notFound } from '../http/errors.ts';
import { sendJson } from '../http/json.ts';
import { isNotModified, sendRepresentation } from '../http/send.ts';
import { validateNamedParams, validateQuery } from '../http/validate.ts';
import { chargeLimit } from '../http/rate-limit.ts';
import type { FileCache } from '../http/file-cache.ts';
import { BRAND_NAMES, findVariant, variantsOf, type BrandName } from './brands.ts';
import { BRAND_RULES, brandImagePath } from './paths.ts';
import { CONTENT_TYPES, ENCODER_REVISION, type OutputFormat } from './formats.ts';
import { isOriginal, type ImageRenderer, type ImageRequest } from './render.ts';
import { BrandPath, BrandQuery, MAX_SIZE, SizedLinkPath, VariantLinkPath } from './schema.ts';
import { brandKey, sourceFile, type BrandSourceRecord } from './source-record.ts';
import { sha256Hex } from '../helpers/digest.ts';
import { dispositionHeader } from '../http/disposition.ts';

type ImageAnswer = { brand: BrandName; variant: string; size?: number; format?: OutputFormat; download: boolean };

/** What the brand routes read: the tree's sources and precomputed files, the file and render caches, and sharp. */
export type BrandRouteDeps = {
  tree: () => BrandTree;
  files: Pick<FileCache, 'read'>;
  imageCache: ByteCache;
  renderer: Pick<ImageRenderer, 'render'>;
  /** Render every query, skipping precomputed files and the cache (benchmarks, debugging). */
  renderAlways?: boolean;
};

/** The little of a tree brand answers read: its folder, its brand sources by key, its precomputed routes by path. */
type BrandTree = {
  dir: string;
  brands: { get(key: string): BrandSourceRecord | undefined };
  routes: { get(path: string): { file: string } | undefined };
};

/** SPEC 4.7 and 4.8, plus the clean static links the build precomputes. */
export function brandRoutes(ctx: BrandRouteDeps): H3 {
  const app = new H3();
  app.get(BRAND_RULES.list.pattern, (event) =>
    sendJson(
      event,
      { brands: Object.fromEntries(BRAND_NAMES.map((b) => [b, variantsOf(b)])) },
      CACHE_CONTROL.brandList,
    ),
  );
  app.get(BRAND_RULES.image.pattern, async (event) => {
    const { brand } = await validateNamedParams(event, BrandPath);
    const query = await validateQuery(event, BrandQuery);
    const variant = (query.variant ?? 'default').toLowerCase();
    return answerImage(ctx, event, {
      brand,
      variant,
      size: query.size,
      format: query.format,
      download: query.download ?? false,
    });
  });
  // Names are case-insensitive (docs/api.md: Brand images): /brand/PAPERMC/LIGHT/64.PNG is /brand/papermc/light/64.png.
  app.get(BRAND_RULES.sizedLink.pattern, async (event) => {
    const { brand } = await validateNamedParams(event, BrandPath);
    const { variant, file } = await validateLinkFile(event, SizedLinkPath);
    const size = Number(file.stem);
    if (size > MAX_SIZE) throw new HTTPError({ status: 400, message: `size must be an integer from 1 to ${MAX_SIZE}` });
    return answerImage(ctx, event, { brand, variant, size, format: file.format, download: false });
  });
  app.get(BRAND_RULES.variantLink.pattern, async (event) => {
    const { brand } = await validateNamedParams(event, BrandPath);
    const { file } = await validateLinkFile(event, VariantLinkPath);
    return answerImage(ctx, event, { brand, variant: file.stem, format: file.format, download: false });
  });
  return app;
}

/** A static link's file name that names no image: 404 naming the path and the form expected (the issue's message). */
function validateLinkFile<T extends z.ZodType>(event: H3Event, schema: T) {
  return getValidatedRouterParams(event, schema, {
    decode: true,
    onError: (failure) => notFound(`No image at ${event.url.pathname}: ${failure.issues[0]!.message}`),
  });
}

async function answerImage(ctx: BrandRouteDeps, event: H3Event, answer: ImageAnswer): Promise<Response> {
  const { brand, variant, size, download } = answer;
  const spec = findVariant(brand, variant);
  const tree = ctx.tree();
  const source = tree.brands.get(brandKey(brand, variant));
  if (!spec || !source) {
    throw notFound(
      `Unknown variant ${JSON.stringify(variant)} of ${brand}; available: ${variantsOf(brand).join(', ')}`,
      { availableVariants: variantsOf(brand) },
    );
  }
  const format = answer.format ?? source.format;
  if (format === 'svg' && source.format !== 'svg') {
    throw new HTTPError({
      status: 400,
      message: `format svg is only available for SVG sources; ${brand} ${variant} is PNG: use png, webp, jpg or gif`,
    });
  }
  const request: ImageRequest = { size, format };
  const original = isOriginal(source, request);
  // The bytes are a pure function of these inputs, so their digest is a strong ETag known before
  // any rendering: a revalidation costs no sharp call.
  const key = sha256Hex(`${source.sha256}|${size ?? ''}|${format}|${spec.background}|${ENCODER_REVISION}`);
  const fileName = `${brand}-${variant}${size === undefined ? '' : `-${size}`}.${format}`;
  const headers: Record<string, string> = {
    'content-type': CONTENT_TYPES[format],
    'cache-control': original ? CACHE_CONTROL.brandOriginal : CACHE_CONTROL.brandResized,
    etag: `"${key}"`,
    'content-disposition': dispositionHeader(download ? 'attachment' : 'inline', fileName),
    ...PUBLIC_HEADERS,
    ...(format === 'svg' ? { 'content-security-policy': SVG_SECURITY_POLICY } : {}),
  };
  if (isNotModified(event.req, headers.etag!)) {
    event.context.answeredFrom = 'cache';
    return sendRepresentation(event, { status: 200, headers, size: 0, body: new Uint8Array(0) });
  }
  const bytes = await imageBytes(ctx, event, {
    key,
    original,
    path: brandImagePath(brand, variant, format, size),
    background: spec.background,
    request,
    source,
  });
  return sendRepresentation(event, { status: 200, headers, size: bytes.length, body: bytes });
}

type BytesJob = {
  key: string;
  original: boolean;
  path: string;
  background: 'light' | 'dark';
  request: ImageRequest;
  source: { sha256: string; format: 'png' | 'svg'; width: number; height: number };
};

/** Cheapest first: the source itself, a precomputed tree file, the render cache, then sharp. */
async function imageBytes(ctx: BrandRouteDeps, event: H3Event, job: BytesJob): Promise<Uint8Array> {
  const tree = ctx.tree();
  if (!ctx.renderAlways) {
    if (job.original) {
      event.context.answeredFrom = 'precomputed';
      return ctx.files.read(tree.dir, sourceFile(job.source));
    }
    const precomputed = tree.routes.get(job.path);
    if (precomputed) {
      event.context.answeredFrom = 'precomputed';
      return ctx.files.read(tree.dir, precomputed.file);
    }
    const cached = await ctx.imageCache.get(job.key);
    if (cached) {
      event.context.answeredFrom = 'cache';
      return cached;
    }
  }
  // SPEC 8: only an image that needs rendering counts; precomputed and cached ones are answered over the limit.
  await chargeLimit(event);
  event.context.answeredFrom = 'rendered';
  if (ctx.renderAlways) return render(ctx, job);
  // The same image asked for again while it renders (and is cached) waits for that render.
  const pending = rendering.get(job.key);
  if (pending) return pending;
  const rendered = render(ctx, job).then(async (bytes) => {
    await ctx.imageCache.set(job.key, bytes, CACHE_TTL_SECONDS);
    return bytes;
  });
  rendering.set(job.key, rendered);
  return rendered.finally(() => rendering.delete(job.key));
}

/** Renders under way in this process, by their key; shared by every context (keys digest all inputs). */
const rendering = new Map<string, Promise<Uint8Array>>();

async function render(ctx: BrandRouteDeps, job: BytesJob): Promise<Uint8Array> {
  const sourceBytes = await ctx.files.read(ctx.tree().dir, sourceFile(job.source));
  if (job.original) return sourceBytes;
  return ctx.renderer.render({ ...job.source, bytes: sourceBytes }, job.request, job.background);
}

/** SPEC 8: resized brand images are cached for an hour (originals are never rendered). */
const CACHE_TTL_SECONDS = 3600;
