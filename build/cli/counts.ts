import { constants, createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { DAY } from '../../server/charts/time.ts';
import type { Config } from '../../server/config.ts';
import { readLogLine } from '../../server/downloads/access-log.ts';
import { countedOf, downloadStore, isCountable, SEEN_DAYS, type Counted } from '../../server/downloads/store.ts';
import { RefusedError } from './release.ts';
import { withState } from './state.ts';

/** Downloads sent to the store at once: memory stays bounded whatever the log's size. */
const BATCH = 5000;

/**
 * `counts import <access.log>`: the JAR downloads nginx served, from its access log (README: the
 * `depot` log_format), into the counts the origins keep, deduplicated with them per client, version
 * and day: importing a log again, or a download the origin counted too, adds nothing. Lines older
 * than the days whose clients are remembered (SEEN_DAYS) are left out, so that stays true.
 */
export async function importAccessLog(args: string[], config: Config, now: number) {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new RefusedError('usage: counts import <access.log>');
  await access(file, constants.R_OK).catch(() => Promise.reject(new RefusedError(`cannot read ${file}`)));
  const today = Math.floor(now / DAY);
  const tally = { lines: 0, downloads: 0, counted: 0, tooOld: 0, unattributed: 0, malformed: 0 };
  await withState(config, async ({ storage, redis }) => {
    const store = downloadStore(storage, redis);
    let batch: Counted[] = [];
    const send = async () => {
      tally.counted += await store.add(batch);
      batch = [];
    };
    const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line === '') continue;
      tally.lines++;
      const entry = readLogLine(line);
      if (entry.kind === 'unattributed' || entry.kind === 'malformed') tally[entry.kind]++;
      if (entry.kind !== 'download') continue;
      if (!isCountable(entry.download.day, today)) {
        tally.tooOld++;
        continue;
      }
      tally.downloads++;
      batch.push(countedOf(entry.download));
      if (batch.length >= BATCH) await send();
    }
    if (batch.length > 0) await send();
  });
  return { file, ...tally, countableDays: SEEN_DAYS };
}
