import type sharpType from 'sharp';

let loading: Promise<typeof sharpType> | undefined;

/**
 * sharp, imported on first use: loading libvips takes about 50 ms, which a release (its images
 * all reused, its brand sources remembered) and the CLI's other commands never need.
 */
export function loadSharp(): Promise<typeof sharpType> {
  loading ??= import('sharp').then((module) => module.default);
  return loading;
}
