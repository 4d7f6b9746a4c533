// Stand-in brand artwork drawn here (the repository cannot ship the vendors' trademarked logos):
// wordmarks for text variants (1600x400), square marks for the rest (1024x1024), transparent PNG;
// leafmc as an SVG of paths only, so it renders the same on any machine, fonts or not.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';

const MARKS = {
  paper: (fill: string) =>
    `<path d="M80 560 L940 120 L700 900 L520 640 Z" fill="${fill}"/><path d="M520 640 L940 120 L430 860 Z" fill="${fill}" opacity="0.7"/>`,
  velocity: (fill: string) =>
    `<path d="M120 180 L420 180 L520 620 L800 180 L920 180 L560 860 L460 860 Z" fill="${fill}"/><circle cx="230" cy="760" r="90" fill="${fill}" opacity="0.8"/>`,
  folia: (fill: string) =>
    `<circle cx="512" cy="512" r="420" fill="none" stroke="${fill}" stroke-width="70"/><path d="M512 170 C760 330 760 700 512 860 C264 700 264 330 512 170 Z" fill="${fill}"/>`,
  canvas: (fill: string) =>
    `<rect x="140" y="140" width="744" height="744" rx="120" fill="none" stroke="${fill}" stroke-width="80"/><path d="M300 700 L460 420 L580 600 L660 480 L760 700 Z" fill="${fill}"/>`,
  purpur: (fill: string) =>
    `<path d="M512 100 L870 306 L870 718 L512 924 L154 718 L154 306 Z" fill="${fill}"/><path d="M512 300 L690 402 L690 622 L512 724 L334 622 L334 402 Z" fill="#ffffff" opacity="0.35"/>`,
};

function square(mark: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="1024" height="1024" viewBox="0 0 1024 1024">${mark}</svg>`;
}

function wordmark(mark: string, text: string, colour: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="1600" height="400" viewBox="0 0 1600 400">
<g transform="translate(40 40) scale(0.3125)">${mark}</g>
<text x="420" y="270" font-family="DejaVu Sans, sans-serif" font-weight="bold" font-size="190" fill="${colour}">${text}</text></svg>`;
}

const PAPER_BLUE = '#3b82c4';
const VELOCITY_BLUE = '#1b6ef3';
const WHITE = '#ffffff';

const ARTWORK: Record<string, Record<string, string>> = {
  papermc: {
    'light.png': wordmark(MARKS.paper(PAPER_BLUE), 'PaperMC', WHITE),
    'dark.png': wordmark(MARKS.paper(PAPER_BLUE), 'PaperMC', '#1f2937'),
    'none.png': square(MARKS.paper(PAPER_BLUE)),
  },
  velocity: {
    'white.png': wordmark(MARKS.velocity(WHITE), 'Velocity', WHITE),
    'blue.png': wordmark(MARKS.velocity(VELOCITY_BLUE), 'Velocity', VELOCITY_BLUE),
    'blue-no-text.png': square(MARKS.velocity(VELOCITY_BLUE)),
    'white-no-text.png': square(MARKS.velocity(WHITE)),
  },
  folia: { 'default.png': square(MARKS.folia('#2f9e44')) },
  canvasmc: { 'default.png': square(MARKS.canvas('#e8590c')) },
  purpurmc: { 'default.png': square(MARKS.purpur('#9c36b5')) },
};

const LEAF_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512">
  <title>LeafMC (stand-in)</title>
  <path d="M96 416 C96 208 224 96 432 80 C424 288 312 416 96 416 Z" fill="#37b24d"/>
  <path d="M96 416 C176 320 256 248 368 152" fill="none" stroke="#2b8a3e" stroke-width="22" stroke-linecap="round"/>
</svg>
`;

export async function writeDemoBrands(dataDir: string): Promise<number> {
  let count = 0;
  for (const [brand, files] of Object.entries(ARTWORK)) {
    await mkdir(join(dataDir, 'brands', brand), { recursive: true });
    for (const [name, svg] of Object.entries(files)) {
      const png = await sharp(Buffer.from(svg)).png({ compressionLevel: 9 }).toBuffer();
      await writeFile(join(dataDir, 'brands', brand, name), png);
      count++;
    }
  }
  await mkdir(join(dataDir, 'brands', 'leafmc'), { recursive: true });
  await writeFile(join(dataDir, 'brands', 'leafmc', 'default.svg'), LEAF_SVG);
  return count + 1;
}
