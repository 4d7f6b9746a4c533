// Output formats and the encoder settings behind them. Settings are chosen for SPEC 8's 200 ms at up
// to 1024 px (sharp's defaults miss it for gif at 512 px and up and nearly for webp at 1024 px):
// see `npm run bench -- --only brands` for times and bytes. Bump ENCODER_REVISION when these change:
// it is part of every cache key, so old renders are never served for new settings.
import { MEDIA_TYPES } from '../http/media-types.ts';

export const ENCODER_REVISION = 2;

export const RASTER_FORMAT_NAMES = ['png', 'webp', 'jpg', 'gif'] as const;
export type RasterFormat = (typeof RASTER_FORMAT_NAMES)[number];
export type OutputFormat = RasterFormat | 'svg';

export const ENCODER_SETTINGS = {
  png: { compressionLevel: 6, adaptiveFiltering: false },
  // effort 3: at 1024 px about half the time of the default (4) for some 10% more bytes.
  webp: { quality: 85, alphaQuality: 90, effort: 3 },
  jpg: { quality: 85, mozjpeg: false },
  // 128 colours without dithering: logos are flat; a third of the default's time at 1024 px, fewer bytes.
  gif: { effort: 3, colours: 128, dither: 0 },
} as const;

export const CONTENT_TYPES: Record<OutputFormat, string> = {
  png: MEDIA_TYPES.png,
  webp: MEDIA_TYPES.webp,
  jpg: MEDIA_TYPES.jpg,
  gif: MEDIA_TYPES.gif,
  svg: MEDIA_TYPES.svg,
};
