import { H3, type H3Event } from 'h3';
import pLimit from 'p-limit';
import sharp from 'sharp';
import { CACHE_CONTROL } from '../http/cache.ts';
import { sendRepresentation, strongEtag } from '../http/send.ts';
import { validQuery } from '../http/validate.ts';
import { aggregate } from './aggregate.ts';
import { drawPlayerChart } from './draw.ts';
import { EXAMPLE_NOW, exampleBuckets } from './example.ts';
import { ChartQuery } from './schema.ts';

/** PNG charts go through sharp two at a time, like brand images. */
const rasterise = pLimit(2);

/** SPEC 4.10 (the player chart of a real server, SPEC 4.9, comes with servers and ingestion). */
export function chartRoutes(): H3 {
  const app = new H3();
  app.get('/api/charts/example', (event) => {
    const query = validQuery(event, ChartQuery);
    const series = aggregate(exampleBuckets(query.days, EXAMPLE_NOW), { days: query.days, now: EXAMPLE_NOW });
    return sendChart(event, drawPlayerChart(series, query), query.format, CACHE_CONTROL.chart);
  });
  return app;
}

/** An SVG chart, or the same chart rasterised (format=png) for places that cannot show SVG. */
export async function sendChart(event: H3Event, svg: string, format: 'svg' | 'png', cacheControl: string) {
  const bytes = format === 'svg' ? new TextEncoder().encode(svg) : await rasterise(() => sharp(Buffer.from(svg)).png().toBuffer());
  const headers: Record<string, string> = {
    'content-type': format === 'svg' ? 'image/svg+xml' : 'image/png',
    'cache-control': cacheControl,
    etag: strongEtag(bytes),
    'x-content-type-options': 'nosniff',
    ...(format === 'svg' ? { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'" } : {}),
  };
  return sendRepresentation(event.req, { status: 200, headers, size: bytes.length, body: bytes });
}
