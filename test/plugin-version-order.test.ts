import fc from 'fast-check';
import semver from 'semver';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { versionsInRange } from '../server/versions/plugin-version-order.ts';
import type { PluginVersionRecord } from '../server/versions/schema.ts';

const range = suite('versionsInRange');

const record = (id: number, pluginVersion: string) => ({ id: `v${id}`, pluginVersion }) as PluginVersionRecord;

// Few distinct versions, so that equal ones (and equal but for build metadata) are common.
const pluginVersion = fc
  .tuple(fc.nat(2), fc.nat(2), fc.constantFrom('', '-beta.1', '-rc.1', '+build.7', '+build.9'))
  .map(([minor, patch, tail]) => `1.${minor}.${patch}${tail}`);

range('is the scan of the catalog it replaces: the same versions, highest first, equal ones in catalog order', () => {
  fc.assert(
    fc.property(
      fc.array(pluginVersion, { maxLength: 40 }),
      fc.option(pluginVersion, { nil: undefined }),
      fc.option(pluginVersion, { nil: undefined }),
      fc.boolean(),
      (names, low, atMost, inclusive) => {
        const versions = names.map((name, i) => record(i, name));
        const bounds = inclusive ? { atLeast: low, atMost } : { above: low, atMost };
        const inRange = (v: PluginVersionRecord) =>
          (low === undefined || (inclusive ? semver.gte(v.pluginVersion, low) : semver.gt(v.pluginVersion, low))) &&
          (atMost === undefined || semver.lte(v.pluginVersion, atMost));
        const scanned = versions.filter(inRange);
        // Array.sort is stable: equal versions keep the catalog's order.
        const expected = [...scanned].sort((a, b) => semver.rcompare(a.pluginVersion, b.pluginVersion));
        assert.equal(
          versionsInRange(versions, bounds).map((v) => v.id),
          expected.map((v) => v.id),
        );
      },
    ),
    { numRuns: 300 },
  );
});

range('asked again of the same catalog, answers from the same ranking', () => {
  const versions = [record(1, '1.0.0'), record(2, '2.0.0'), record(3, '1.5.0')];
  assert.equal(
    versionsInRange(versions, { above: '1.0.0' }).map((v) => v.id),
    ['v2', 'v3'],
  );
  assert.equal(
    versionsInRange(versions, { atLeast: '1.5.0', atMost: '1.5.0' }).map((v) => v.id),
    ['v3'],
  );
});

range.run();
