// The floor over HTTP: node:http running the raw sharp resize with the origin's encoder settings.
// Usage: node --import tsx bench/sharp-baseline.ts <source.png> <port>; GET /?size=512&format=webp
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import sharp from 'sharp';
import { ENCODER_SETTINGS } from '../server/brands/formats.ts';

const [file, port] = process.argv.slice(2);
const source = readFileSync(file!);
createServer(async (req, res) => {
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
  const image = sharp(source).resize({ width: Number(query.get('size')) });
  const out =
    query.get('format') === 'webp'
      ? await image.webp(ENCODER_SETTINGS.webp).toBuffer()
      : await image.png(ENCODER_SETTINGS.png).toBuffer();
  res.writeHead(200, { 'content-type': `image/${query.get('format')}`, 'content-length': out.length }).end(out);
}).listen(Number(port), '127.0.0.1');
