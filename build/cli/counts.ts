import { constants, createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { DAY } from '../../server/helpers/duration.ts';
import type { Config } from '../../server/config.ts';
import { readLogLine } from '../../server/downloads/access-log.ts';
import { repairJournals } from '../../server/downloads/repair.ts';
import { currentTreeDir, openTree } from '../../server/tree/open.ts';
import { countedOf, type Counted, type Download } from '../../server/downloads/counted.ts';
import { downloadStore, isCountable, SEEN_DAYS } from '../../server/downloads/store.ts';
import type { Catalog } from '../../server/versions/catalog.ts';
import { RefusedError } from '../changes/refused.ts';
import { withState } from '../changes/state.ts';

/** Why a download read from a log is left out (the tally it goes to), or null when it counts. */
function notCountable({ day, versionId, software }: Download, catalog: Catalog, today: number) {
  const version = catalog.byId.get(versionId);
  if (!version) return 'unknownVersion';
  if (software && !version.serverSoftware.includes(software)) return 'otherSoftware';
  if (day > today) return 'future';
  if (!isCountable(day, today)) return 'tooOld';
  return null;
}

/** Downloads sent to the store at once: memory stays bounded whatever the log's size. */
const BATCH = 5000;

/**
 * `counts import <access.log>`: the JAR downloads nginx served, from its access log (docs/api.md: the
 * `depot` log_format), into the counts the origins keep, deduplicated with them per client, version
 * and day: importing a log again, or a download the origin counted too, adds nothing. Lines older
 * than the days whose clients are remembered (SEEN_DAYS) are left out, so that stays true; so are
 * lines dated after today, and lines naming a version the served catalog does not hold, or a
 * software that version does not run on (a log is outside input: it could name anything).
 */
export async function importAccessLog(args: string[], config: Config, now: number) {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new RefusedError('usage: counts import <access.log>');
  await access(file, constants.R_OK).catch(() => Promise.reject(new RefusedError(`cannot read ${file}`)));
  const tree = await currentTreeDir(config.distDir);
  if (!tree) throw new RefusedError(`${config.distDir} holds no built tree: build first (npm run build)`);
  const { catalog } = await openTree(tree);
  const today = Math.floor(now / DAY);
  const tally = {
    lines: 0,
    downloads: 0,
    counted: 0,
    tooOld: 0,
    future: 0,
    unknownVersion: 0,
    otherSoftware: 0,
    unattributed: 0,
    malformed: 0,
  };
  await withState(config, async ({ storage, redis }) => {
    const store = downloadStore(storage, redis);
    let batch: Counted[] = [];
    const send = async () => {
      // A full disk (or a store that is down) stops the import where it is: what it counted stays
      // counted, and running it again counts nothing twice.
      tally.counted += await store
        .add(batch)
        .catch((error: Error) =>
          Promise.reject(
            new RefusedError(
              `stopped after ${tally.lines} lines (${tally.counted} counted): could not store counts (${error.message}); ` +
                'free the space and run it again: nothing is counted twice',
            ),
          ),
        );
      batch = [];
    };
    const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line === '') continue;
      tally.lines++;
      const entry = readLogLine(line);
      if (entry.kind === 'unattributed' || entry.kind === 'malformed') tally[entry.kind]++;
      if (entry.kind !== 'download') continue;
      const skipped = notCountable(entry.download, catalog, today);
      if (skipped) {
        tally[skipped]++;
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

/**
 * `counts repair`: rewrites the embedded store's day journals without the torn or malformed text
 * a full disk left in them (before appends were cut back), and says what it dropped. The origin
 * answers the counts meanwhile, skipping such text; this makes the files whole again.
 */
export async function repairCounts(args: string[], config: Config) {
  parseArgs({ args, allowPositionals: false, options: {} });
  if (config.redisUrl)
    throw new RefusedError('counts repair: with REDIS_URL the counts live in Redis, which keeps no journal to repair');
  const result = await withState(config, ({ storage }) => repairJournals(storage));
  return { ...result, dropped: result.repaired.reduce((sum, day) => sum + day.dropped, 0) };
}
