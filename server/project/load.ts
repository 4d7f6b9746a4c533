import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DataError, parseFile, readJsonFile } from '../data-files.ts';
import type { DataFileMemory } from '../data-file-memory.ts';
import { sha256Hex } from '../helpers/digest.ts';
import { loadSharp } from '../brands/sharp.ts';
import { changelogLimitProblem } from '../changelog-markdown.ts';
import { ICON_SIZES, ProjectFile, type ProjectIcon, type ProjectRecord } from './schema.ts';

/**
 * Limits on the icon: large enough for its largest rendition (never enlarged from a bitmap), small
 * enough to decode safely on every build.
 */
const ICON_LIMITS = { maxBytes: 1024 * 1024, minRasterSide: Math.max(...ICON_SIZES), maxSide: 4096 } as const;

const projectFile = (dataDir: string) => join(dataDir, 'project.json');

/** What checking the icon remembers of its file: what it was checked to be, as a brand source is. */
type ProjectMemory = DataFileMemory<{ brands: ProjectIcon }>;

export type LoadedProject = { record: ProjectRecord; iconBytes: Uint8Array | null };

/**
 * data/project.json, checked: its fields (ProjectFile), its description's render limits (those of a
 * changelog), and its icon: a square PNG or SVG in data/ that sharp reads, within ICON_LIMITS.
 * Null when there is no file (the site keeps its neutral wording). Fails with one line naming the
 * file and the field. With `memory`, an icon unchanged since it was last checked is not decoded.
 */
export async function loadProject(dataDir: string, memory?: ProjectMemory): Promise<LoadedProject | null> {
  const file = projectFile(dataDir);
  const raw = await readJsonFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (raw === undefined) return null;
  const { icon, ...fields } = parseFile(ProjectFile, raw, file);
  const problem = fields.description === undefined ? undefined : changelogLimitProblem(fields.description);
  if (problem) throw new DataError(`${file}: description: ${problem}`);
  if (icon === undefined) return { record: fields, iconBytes: null };
  const checked = await checkIcon(dataDir, icon, memory);
  return { record: { ...fields, icon: checked.icon }, iconBytes: checked.bytes };
}

async function checkIcon(dataDir: string, name: string, memory: ProjectMemory | undefined) {
  const fail = (why: string) => {
    throw new DataError(`${projectFile(dataDir)}: icon: ${join(dataDir, name)} ${why}`);
  };
  const path = join(dataDir, name);
  const before = await stat(path).catch(() => fail('does not exist'));
  if (!before.isFile()) fail('is not a file');
  if (before.size > ICON_LIMITS.maxBytes)
    fail(`has ${before.size} bytes; an icon holds at most ${ICON_LIMITS.maxBytes}`);
  const bytes = new Uint8Array(await readFile(path));
  const sha256 = sha256Hex(bytes);
  // Remembered as a brand source is (same kind of check, same fields), under a name no brand has.
  const key = `project/${name}`;
  const known = memory?.recall('brands', key, before);
  if (known?.sha256 === sha256) return { icon: known, bytes };
  const expected = name.endsWith('.svg') ? 'svg' : 'png';
  const sharp = await loadSharp();
  const meta = await sharp(bytes, { limitInputPixels: ICON_LIMITS.maxSide ** 2 })
    .metadata()
    .catch((error: Error) => fail(`is not a readable ${expected.toUpperCase()} image (${error.message})`));
  const { width = 0, height = 0 } = meta;
  if (meta.format !== expected) fail(`is ${meta.format}, not ${expected}`);
  if (width !== height) fail(`is ${width}x${height}; an icon is square`);
  if (width > ICON_LIMITS.maxSide) fail(`is ${width} px a side; at most ${ICON_LIMITS.maxSide}`);
  if (expected === 'png' && width < ICON_LIMITS.minRasterSide)
    fail(`is ${width} px a side; a PNG icon needs at least ${ICON_LIMITS.minRasterSide} (its largest rendition)`);
  const icon: ProjectIcon = { format: expected, width, height, sha256 };
  memory?.remember('brands', key, before, icon);
  return { icon, bytes };
}
