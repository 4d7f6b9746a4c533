import { changelogHtml } from '../../../server/changelog-markdown.ts';
import { projectIconPath } from '../../../server/project/paths.ts';
import { PROJECT_LINKS, type ProjectLink, type ProjectRecord } from '../../../server/project/schema.ts';

const LINK_LABELS: Record<ProjectLink, string> = {
  source: 'Source code',
  issues: 'Issues',
  wiki: 'Wiki',
  discord: 'Discord',
  donations: 'Donations',
};

/** `path` under PUBLIC_URL, where the tree is served (Open Graph and Twitter want absolute URLs). */
export const absoluteUrl = (publicUrl: string, path: string) => new URL(path, publicUrl).href;

/** What every page's head and header show of the project (none without data/project.json: the neutral wording). */
export function projectHead(project: ProjectRecord | undefined, publicUrl: string) {
  if (!project) return undefined;
  const icon = project.icon
    ? {
        small: projectIconPath(32),
        touch: projectIconPath(180),
        large: absoluteUrl(publicUrl, projectIconPath(512)),
      }
    : undefined;
  return { name: project.name, summary: project.summary, icon };
}

/** The home page's introduction: summary, description as sanitised HTML (as a changelog), links, licence. */
export function projectIntro(project: ProjectRecord | undefined) {
  if (!project) return undefined;
  const links = PROJECT_LINKS.flatMap((link) => {
    const href = project.links?.[link];
    return href ? [{ href, label: LINK_LABELS[link] }] : [];
  });
  return {
    summary: project.summary,
    descriptionHtml: project.description === undefined ? undefined : changelogHtml(project.description),
    links,
    license: project.license
      ? { id: project.license, href: `https://spdx.org/licenses/${encodeURIComponent(project.license)}.html` }
      : undefined,
  };
}
