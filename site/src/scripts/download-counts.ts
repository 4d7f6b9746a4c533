import * as z from 'zod/mini';
import { formatCount } from '../lib/format.ts';

// Download counts on the static pages (issue 17): the site is built at releases, the counts are
// live. Elements marked data-downloads are hidden in the HTML and shown once the counts arrive;
// a failed request or an answer of another shape leaves them hidden, the page as without JavaScript.
// Inside them (or on them):
//   data-downloads-versions="<id> <id>": the sum of these versions' downloads
//   data-downloads-noun: "1 download", "1,234 downloads" rather than the bare number
//   data-downloads-split="<id>": how one version's downloads came, by the link they used

const DownloadCounts = z.object({
  versions: z.array(
    z.object({
      id: z.string(),
      total: z.number(),
      software: z.record(z.string(), z.number()),
      direct: z.number(),
    }),
  ),
});
type VersionCounts = z.infer<typeof DownloadCounts>['versions'][number];

const elements = [
  ...document.querySelectorAll<HTMLElement>('[data-downloads], [data-downloads-versions], [data-downloads-split]'),
];
if (elements.length > 0) void show(elements);

async function show(elements: HTMLElement[]): Promise<void> {
  const counts = await fetch('/api/plugin-versions/downloads').then(
    async (response) => (response.ok ? DownloadCounts.safeParse(await response.json()) : undefined),
    () => undefined,
  );
  if (!counts?.success) return;
  const byId = new Map(counts.data.versions.map((version) => [version.id, version]));
  for (const element of elements) {
    const ids = element.dataset.downloadsVersions?.split(' ').filter(Boolean);
    if (ids)
      fill(
        element,
        ids.reduce((sum, id) => sum + (byId.get(id)?.total ?? 0), 0),
      );
    const split = element.dataset.downloadsSplit;
    if (split !== undefined) element.textContent = describeSplit(byId.get(split));
    element.hidden = false;
  }
}

function fill(element: HTMLElement, count: number): void {
  const { text, exact } = formatCount(count);
  const noun = element.dataset.downloadsNoun !== undefined ? ` download${count === 1 ? '' : 's'}` : '';
  element.textContent = `${text}${noun}`;
  if (exact) element.title = `${exact} downloads`;
}

/** "3 by its own link, 2 through PaperMC's latest or resolve link": the software named by the link used. */
function describeSplit(version: VersionCounts | undefined): string {
  if (!version || version.total === 0) return 'No download counted yet.';
  const parts = [
    ...(version.direct > 0 ? [`${formatCount(version.direct).text} by its own link`] : []),
    ...Object.entries(version.software)
      .filter(([, count]) => count > 0)
      .map(([software, count]) => `${formatCount(count).text} through ${software}'s latest or resolve link`),
  ];
  return `${parts.join(', ')}.`;
}
