import { H3 } from 'h3';
import { CACHE_CONTROL } from '../http/cache.ts';
import { sendJson } from '../http/json.ts';
import { summarise } from './counts.ts';
import type { DownloadCounter } from './counter.ts';
import { DOWNLOAD_RULES } from './paths.ts';

/** What the counts read: the ids of the tree's versions (every one is listed, counted or not), the counter and the clock. */
export type DownloadRouteDeps = {
  tree: () => { catalog: { versions: readonly { id: string }[] } };
  downloads: Pick<DownloadCounter, 'read'>;
  now: () => number;
};

/** Issue 17: the download counts, read live from the store (the answer is cached 5 minutes downstream). */
export function downloadRoutes(ctx: DownloadRouteDeps): H3 {
  const app = new H3();
  app.get(DOWNLOAD_RULES.counts.pattern, async (event) => {
    const catalog = ctx.tree().catalog;
    const counts = summarise(
      await ctx.downloads.read(),
      catalog.versions.map((version) => version.id),
      ctx.now(),
    );
    return sendJson(event, counts, CACHE_CONTROL.downloads);
  });
  return app;
}
