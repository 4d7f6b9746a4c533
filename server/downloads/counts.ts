import { z } from 'zod';
import 'zod-openapi';
import { DAY } from '../helpers/duration.ts';
import { PLUGIN_VERSION_ID } from '../versions/schema.ts';
import { SERVER_SOFTWARE, type ServerSoftware } from '../versions/software.ts';
import type { DayCount } from './store.ts';

/** The daily series covers this many UTC days, today (so far) last. */
const SERIES_DAYS = 365;

const Downloads = z.int().nonnegative();
const BySoftware = z
  .record(z.enum(SERVER_SOFTWARE), Downloads)
  .meta({ description: 'Downloads through the latest and resolve URLs, by the software the URL named' });
const Direct = Downloads.meta({
  description: 'Downloads by id (`/api/plugin-versions/download/<id>`), which name no software',
});

/** GET /api/plugin-versions/downloads. */
export const DownloadCounts = z
  .object({
    total: Downloads.meta({ description: 'Every counted download, all time' }),
    software: BySoftware,
    direct: Direct,
    versions: z
      .array(
        z.object({
          id: z.string().regex(PLUGIN_VERSION_ID),
          total: Downloads,
          software: BySoftware,
          direct: Direct,
        }),
      )
      .meta({
        description: 'Every version the catalog serves (newest first), then any counted version it no longer serves',
      }),
    daily: z
      .array(z.object({ date: z.iso.date(), downloads: Downloads }))
      .meta({ description: `Downloads per UTC day, the last ${SERIES_DAYS} days, oldest first, today so far last` }),
  })
  .meta({
    id: 'DownloadCounts',
    description:
      'JAR downloads the origin served (GET answered 200 or 206), each client address (IPv6: its /64) counted once per version and UTC day',
  });
export type DownloadCounts = z.infer<typeof DownloadCounts>;

const emptySoftware = (): Record<ServerSoftware, number> =>
  Object.fromEntries(SERVER_SOFTWARE.map((name) => [name, 0])) as Record<ServerSoftware, number>;

/** The answer from every stored count: `versionIds` in the catalog's order, `now` picks today. */
export function summarise(counts: readonly DayCount[], versionIds: readonly string[], now: number): DownloadCounts {
  const today = Math.floor(now / DAY);
  const first = today - SERIES_DAYS + 1;
  const daily = Array.from({ length: SERIES_DAYS }, () => 0);
  const answer: DownloadCounts = { total: 0, software: emptySoftware(), direct: 0, versions: [], daily: [] };
  const versions = new Map(versionIds.map((id) => [id, { id, total: 0, software: emptySoftware(), direct: 0 }]));
  for (const { day, versionId, software, downloads } of counts) {
    let version = versions.get(versionId);
    if (!version)
      versions.set(versionId, (version = { id: versionId, total: 0, software: emptySoftware(), direct: 0 }));
    for (const sum of [answer, version]) {
      sum.total += downloads;
      if (software) sum.software[software] += downloads;
      else sum.direct += downloads;
    }
    if (day >= first && day <= today) daily[day - first]! += downloads;
  }
  const uncatalogued = [...versions.keys()].slice(versionIds.length).sort();
  answer.versions = [...versionIds, ...uncatalogued].map((id) => versions.get(id)!);
  answer.daily = daily.map((downloads, index) => ({
    date: new Date((first + index) * DAY).toISOString().slice(0, 10),
    downloads,
  }));
  return answer;
}
