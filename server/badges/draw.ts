import type { BADGE_STYLES, Badge } from './schema.ts';

/**
 * The badge as shields.io draws it: badge-maker measures the text (Verdana 11px widths). Imported on
 * the first badge: loading it takes about 65 ms, which every `depot` command and build paid.
 */
export async function drawBadge(badge: Badge, style: (typeof BADGE_STYLES)[number]): Promise<string> {
  const { makeBadge } = await import('badge-maker');
  return makeBadge({ ...badge, style });
}

/** The PNG's scale: a 20-pixel-high badge stays sharp on a high-density screen. */
const PNG_SCALE = 2;

/** The same SVG at PNG_SCALE times its size (a viewBox keeps the drawing), for rasterising. */
export function scaledForPng(svg: string): string {
  return svg.replace(/^<svg ([^>]*?)width="(\d+(?:\.\d+)?)" height="(\d+(?:\.\d+)?)"/, (_, before, width, height) => {
    const [w, h] = [Number(width), Number(height)];
    return `<svg ${before}viewBox="0 0 ${w} ${h}" width="${w * PNG_SCALE}" height="${h * PNG_SCALE}"`;
  });
}

const PREFIXES = ['k', 'M', 'G', 'T'];

/** A count as shields.io shows one: 999, 1.2k, 12k, 3.4M. */
export function metric(count: number): string {
  for (let index = PREFIXES.length; index >= 1; index--) {
    const scaled = count / 1000 ** index;
    if (scaled < 1) continue;
    const oneDecimal = scaled.toFixed(1);
    if (scaled < 10 && !oneDecimal.endsWith('.0')) return `${oneDecimal}${PREFIXES[index - 1]}`;
    const rounded = Math.round(scaled);
    // 999.5k rounds to 1000k: that is 1M.
    if (rounded >= 1000 && index < PREFIXES.length) return `1${PREFIXES[index]}`;
    return `${rounded}${PREFIXES[index - 1]}`;
  }
  return String(count);
}
