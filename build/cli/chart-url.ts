import { parseArgs } from 'node:util';
import { ServerId } from '../../server/charts/schema.ts';
import { serverStore } from '../../server/charts/servers.ts';
import { ChartUrlBody, chartUrlKeys, mintChartUrl } from '../../server/charts/signed-url.ts';
import type { Config } from '../../server/config.ts';
import { RefusedError } from '../changes/refused.ts';
import { withState } from '../changes/state.ts';

const NUMBERS = ['days', 'width', 'height'] as const;

/**
 * `chart-url <serverId> [--days 7] [--expires 30d] [--width W] [--height H] [--theme T]
 * [--background B] [--format F]`: a signed URL of the server's chart that answers without a token
 * until it expires (as POST /api/servers/:id/chart-urls mints for the owner), under PUBLIC_URL.
 */
export async function chartUrl(args: string[], config: Config) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: Object.fromEntries(
      ['expires', 'theme', 'background', 'format', ...NUMBERS].map((name) => [name, { type: 'string' as const }]),
    ),
  });
  const serverId = ServerId.safeParse(positionals[0]);
  if (!serverId.success) throw new RefusedError('serverId must be a UUID, e.g. chart-url <serverId> --days 7');
  // Numbers as numbers, as the JSON body has them; anything else reaches zod as text and is refused by name.
  const asNumber = (text: string | undefined) => (text !== undefined && /^\d{1,6}$/.test(text) ? Number(text) : text);
  const body = ChartUrlBody.safeParse({
    ...values,
    ...Object.fromEntries(NUMBERS.map((name) => [name, asNumber(values[name] as string | undefined)])),
  });
  if (!body.success)
    throw new RefusedError(body.error.issues.map((issue) => `--${String(issue.path[0])}: ${issue.message}`).join('; '));
  // CHART_URL_KEYS, else the key the origins keep in the same store.
  const keys = await withState(config, async ({ storage, redis }) => {
    if (!(await serverStore(storage).get(serverId.data))) throw new RefusedError(`no server with id ${serverId.data}`);
    return chartUrlKeys(config.chartUrlKeys, storage, redis);
  });
  return {
    serverId: serverId.data,
    ...mintChartUrl({
      baseUrl: config.publicUrl,
      keys,
      serverId: serverId.data,
      body: body.data,
      now: Date.now(),
    }),
  };
}
