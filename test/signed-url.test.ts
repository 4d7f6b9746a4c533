import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ChartQuery } from '../server/charts/schema.ts';
import { chartSignatureMatches, signChartUrl } from '../server/charts/signed-url.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const matches = suite('chartSignatureMatches');

matches('of the 4 spellings that decode to a signature, only the canonical one verifies', () => {
  fc.assert(
    fc.property(
      fc.string({ minLength: 32, maxLength: 64 }),
      fc.integer({ min: 1, max: 365 }),
      fc.integer({ min: 0, max: 2 ** 40 }),
      (key, days, exp) => {
        const query = ChartQuery.parse({ days: String(days) });
        const url = signChartUrl({ baseUrl: 'http://x', keys: [key], serverId: 's', given: {}, query, exp });
        const sig = new URL(url).searchParams.get('sig')!;
        const last = ALPHABET.indexOf(sig.at(-1)!);
        const spellings = [0, 1, 2, 3].map((spare) => sig.slice(0, -1) + ALPHABET[(last & ~3) | spare]);
        const accepted = spellings.filter((spelling) => chartSignatureMatches([key], 's', query, exp, spelling));
        assert.equal(accepted, [sig]);
      },
    ),
    { numRuns: 200 },
  );
});

matches.run();
