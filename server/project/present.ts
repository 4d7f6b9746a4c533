import { projectIconPath } from './paths.ts';
import { ICON_SIZES, type ProjectRecord } from './schema.ts';

/** GET /api/project's answer: the record as written, the icon as its renditions' paths (largest last). */
export function presentProject(project: ProjectRecord) {
  const { icon, ...fields } = project;
  return {
    ...fields,
    ...(icon ? { icons: ICON_SIZES.map((size) => ({ size, url: projectIconPath(size) })) } : {}),
  };
}
