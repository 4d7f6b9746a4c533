import { pathRule } from '../http/path-rule.ts';

/** SPEC 4.9/4.10's chart URLs and ingestion, each written once. */
export const CHART_RULES = {
  example: pathRule('/api/charts/example'),
  players: pathRule('/api/servers/:id/chart/players'),
  stats: pathRule('/api/servers/:id/stats'),
  chartUrls: pathRule('/api/servers/:id/chart-urls'),
} as const;

/** A server's chart with its query (a signed URL's path). */
export const playersChartPath = (serverId: string, query: URLSearchParams) =>
  `${CHART_RULES.players.build({ id: serverId })}?${query}`;
