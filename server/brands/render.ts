import pLimit from 'p-limit';
import type { Sharp } from 'sharp';
import { loadSharp } from './sharp.ts';
import { ENCODER_SETTINGS, type OutputFormat, type RasterFormat } from './formats.ts';
import { FLATTEN_COLOURS } from './brands.ts';

export type ImageSource = { bytes: Uint8Array; format: 'png' | 'svg'; width: number; height: number };

/** A normalised request: `format` is resolved (absent means the source's own), `size` is the width. */
export type ImageRequest = { size?: number; format: OutputFormat };

/** The source bytes themselves answer: never re-encoded (SPEC 8: originals fast). */
export function isOriginal(source: Pick<ImageSource, 'format'>, request: ImageRequest): boolean {
  return request.size === undefined && request.format === source.format;
}

/**
 * Renders one brand image: an SVG source scaled as a vector (width/height attributes) or rasterised
 * at the requested width from the vector, never by enlarging a bitmap; a PNG source resized by
 * width, aspect kept. JPEG, which has no alpha, is flattened onto the variant's background.
 */
async function renderBrandImage(
  source: ImageSource,
  request: ImageRequest,
  background: 'light' | 'dark',
): Promise<Uint8Array> {
  if (request.format === 'svg') return scaleSvg(source, request.size ?? source.width);
  const sharp = await loadSharp();
  const width = request.size ?? source.width;
  const image =
    source.format === 'svg'
      ? // librsvg takes a density from 1 dpi: tiny sizes rasterise a little larger, then shrink.
        sharp(source.bytes, { density: Math.max(1, (72 * width) / source.width) }).resize({ width })
      : sharp(source.bytes).resize({ width });
  if (request.format === 'jpg') image.flatten({ background: FLATTEN_COLOURS[background] });
  return encode(image, request.format);
}

function encode(image: Sharp, format: RasterFormat): Promise<Buffer> {
  switch (format) {
    case 'png':
      return image.png(ENCODER_SETTINGS.png).toBuffer();
    case 'webp':
      return image.webp(ENCODER_SETTINGS.webp).toBuffer();
    case 'jpg':
      return image.jpeg(ENCODER_SETTINGS.jpg).toBuffer();
    case 'gif':
      return image.gif(ENCODER_SETTINGS.gif).toBuffer();
  }
}

/** Sets the root element's width and height (adding a viewBox when missing, so it scales). */
function scaleSvg(source: ImageSource, width: number): Uint8Array {
  const text = new TextDecoder().decode(source.bytes);
  const height = Math.max(1, Math.round((width * source.height) / source.width));
  const scaled = text.replace(/<svg\b[^>]*>/, (tag) => {
    let out = tag.replace(/\s(width|height)="[^"]*"/g, '');
    if (!/\sviewBox=/.test(out)) out = out.replace(/^<svg\b/, `<svg viewBox="0 0 ${source.width} ${source.height}"`);
    return out.replace(/^<svg\b/, `<svg width="${width}" height="${height}"`);
  });
  return new TextEncoder().encode(scaled);
}

export type ImageRenderer = {
  render: typeof renderBrandImage;
  /** An SVG document (a chart) as PNG at its own size. */
  rasterise: (svg: string) => Promise<Uint8Array>;
  /** How many images were rendered: tests count these to prove a cached answer renders nothing. */
  renders: () => number;
  /** The most renders that ever ran at once. */
  peak: () => number;
};

/**
 * Every sharp call of the service goes through here. Bounded concurrency: a flood of large resizes
 * or chart PNGs queues instead of exhausting memory.
 */
export function createImageRenderer(concurrency = 2): ImageRenderer {
  const limit = pLimit(concurrency);
  let count = 0;
  let running = 0;
  let peak = 0;
  const counted = <T>(work: () => Promise<T>) =>
    limit(async () => {
      count++;
      peak = Math.max(peak, ++running);
      try {
        return await work();
      } finally {
        running--;
      }
    });
  return {
    render: (source, request, background) => counted(() => renderBrandImage(source, request, background)),
    rasterise: (svg) => counted(async () => (await loadSharp())(Buffer.from(svg)).png().toBuffer()),
    renders: () => count,
    peak: () => peak,
  };
}
