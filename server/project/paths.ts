import { oneOf, pathRule } from '../http/path-rule.ts';
import { ICON_SIZES, type IconSize } from './schema.ts';

/** The project's identity (data/project.json) and its icon's renditions, each written once. */
export const PROJECT_RULES = {
  project: pathRule('/api/project'),
  icon: pathRule('/api/project/icon/:size.png', { size: oneOf(ICON_SIZES.map(String)) }),
} as const;

export const projectIconPath = (size: IconSize) => PROJECT_RULES.icon.build({ size: String(size) });

/** Every finite path of the project: its answer (a 404 without project.json), and each icon rendition when it has an icon. */
export function listProjectPaths(project: { icon?: unknown } | undefined): string[] {
  const icons = project?.icon ? ICON_SIZES.map(projectIconPath) : [];
  return [PROJECT_RULES.project.pattern, ...icons];
}
