import { parseArgs } from 'node:util';
import { auditStore } from '../../server/audit/store.ts';
import type { Config } from '../../server/config.ts';
import { parseDuration } from '../../server/helpers/duration.ts';
import { RefusedError } from '../changes/refused.ts';
import { withState } from '../changes/state.ts';

/** `audit [--since 7d] [--target <id>]`: the log's records as JSON, one a line, newest last. */
export async function readAudit(args: string[], config: Config, now: number): Promise<string[]> {
  const { values } = parseArgs({ args, options: { since: { type: 'string' }, target: { type: 'string' } } });
  const since = values.since === undefined ? undefined : parseDuration(values.since);
  if (since === undefined && values.since !== undefined)
    throw new RefusedError('--since: must be a duration such as 90m, 12h or 7d');
  const { target } = values;
  if (target !== undefined && (target.length === 0 || target.length > 200))
    throw new RefusedError('--target: must be a version id, username, server id or webhook id');
  const log = await withState(config, (state) => auditStore(state.storage, state.redis).read());
  if (log.unreadable > 0) console.error(`[audit] ${log.unreadable} stored record(s) do not parse; skipped`);
  const from = since === undefined ? -Infinity : now - since;
  return log.records
    .filter((record) => Date.parse(record.at) >= from && (target === undefined || record.target === target))
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
    .map((record) => JSON.stringify(record));
}
