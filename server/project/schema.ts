import spdxIds from 'spdx-license-ids/index.json' with { type: 'json' };
import { z } from 'zod';
import { refuseForbiddenText } from '../free-text.ts';
import { ChangelogMarkdown } from '../changelog-markdown.ts';

const SPDX_IDS: ReadonlySet<string> = new Set(spdxIds);

/** The links a project may name, in the order the site lists them. */
export const PROJECT_LINKS = ['source', 'issues', 'wiki', 'discord', 'donations'] as const;
export type ProjectLink = (typeof PROJECT_LINKS)[number];

/** The icon's renditions: favicon, Apple touch icon, and Open Graph / feed logo (each square, in px). */
export const ICON_SIZES = [32, 180, 512] as const;
export type IconSize = (typeof ICON_SIZES)[number];

/** Longest summary: what search results and link previews show of a description. */
export const SUMMARY_MAX = 160;
const NAME_MAX = 80;

/**
 * One line for a title, a header, a feed and a Discord author: the character rule, and no `]]>`
 * (a name is no place for it; the feed's text would have to escape it).
 */
const OneLine = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((text) => text.trim() === text, { error: 'must not start or end with spaces' })
    .superRefine(refuseForbiddenText({ cdata: false }));

/** An https URL only: a `javascript:` or `http:` link never reaches a page, a feed or a message. */
const HttpsUrl = z
  .string()
  .max(2000)
  .superRefine(refuseForbiddenText())
  .refine((text) => URL.canParse(text) && new URL(text).protocol === 'https:' && new URL(text).hostname !== '', {
    error: 'must be an https:// URL',
  });

/** A file directly in data/: a PNG or SVG the brand image pipeline renders from. */
const IconFileName = z
  .string()
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*\.(png|svg)$/, { error: 'must be the name of a .png or .svg file in data/' });

/**
 * An SPDX license identifier (`MIT`, `Apache-2.0`, `GPL-3.0-or-later`) on SPDX's list, as the
 * spdx-license-ids package keeps it, or `LicenseRef-<name>` for a licence of the project's own; one
 * id, no expression. Deprecated ids (`GPL-3.0`) are refused: they say less than their successors.
 */
const SpdxId = z
  .string()
  .max(64)
  .refine((id) => SPDX_IDS.has(id) || /^LicenseRef-[A-Za-z0-9.-]+$/.test(id), {
    error: 'must be an SPDX license identifier such as MIT or Apache-2.0 (spdx.org/licenses), or LicenseRef-<name>',
  });

/** data/project.json: who the depot is for. Every field but the name is optional. */
export const ProjectFile = z.strictObject({
  name: OneLine(NAME_MAX),
  summary: OneLine(SUMMARY_MAX).optional(),
  /** Markdown, rendered and sanitised as a changelog is (changelogHtml). */
  description: ChangelogMarkdown.optional(),
  icon: IconFileName.optional(),
  links: z
    .strictObject(
      Object.fromEntries(PROJECT_LINKS.map((link) => [link, HttpsUrl.optional()])) as {
        [K in ProjectLink]: z.ZodOptional<typeof HttpsUrl>;
      },
    )
    .optional(),
  license: SpdxId.optional(),
});
export type ProjectFile = z.infer<typeof ProjectFile>;

/** The icon as the tree records it: its source bytes are a tree file (`files/<sha256>.<format>`). */
export const ProjectIcon = z.strictObject({
  format: z.enum(['png', 'svg']),
  width: z.int().positive(),
  height: z.int().positive(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type ProjectIcon = z.infer<typeof ProjectIcon>;

/** The project as catalog.json holds it: the file's fields, the icon checked and digested. */
export const ProjectRecord = ProjectFile.extend({ icon: ProjectIcon.optional() });
export type ProjectRecord = z.infer<typeof ProjectRecord>;
