// The demo plugin's identity (issue 31): data/project.json and its icon, drawn here as paths only
// (no font, no third-party image), so it renders the same on any machine.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import type { ProjectFile } from '../server/project/schema.ts';

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512">
<rect width="512" height="512" rx="96" fill="#1f6feb"/>
<path d="M136 112 H272 C372 112 424 172 424 256 C424 340 372 400 272 400 H136 Z M200 168 V344 H268 C326 344 358 310 358 256 C358 202 326 168 268 168 Z" fill="#ffffff" fill-rule="evenodd"/>
</svg>`;

const DEMO_PROJECT: ProjectFile = {
  name: 'DepotDemo',
  summary: 'A demo plugin for every server software: downloads, version history and update checks.',
  description:
    'DepotDemo shows what **plugin depot** serves: one build per server software and Java version, ' +
    'its changelog, and links that always point at the newest build.\n\n' +
    '- Runs on PaperMC, Purpur, Folia, Velocity and more\n- Java 8 to 25, and Minecraft 26.1\n',
  icon: 'project-icon.png',
  links: {
    source: 'https://github.com/example/depot-demo',
    issues: 'https://github.com/example/depot-demo/issues',
    discord: 'https://discord.gg/example',
  },
  license: 'MIT',
};

/** Writes data/project.json and data/project-icon.png (512 px). */
export async function writeDemoProject(dataDir: string): Promise<void> {
  const png = await sharp(Buffer.from(ICON_SVG)).png({ compressionLevel: 9 }).toBuffer();
  await writeFile(join(dataDir, DEMO_PROJECT.icon!), png);
  await writeFile(join(dataDir, 'project.json'), `${JSON.stringify(DEMO_PROJECT, null, 2)}\n`);
}
