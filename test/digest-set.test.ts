import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DigestSet, digestHex, digestOfHex, seenDigest } from '../server/downloads/digest-set.ts';

test('a seen digest is the first 16 hex digits of SHA-256(day, version, client), as journals and Redis hold it', () => {
  fc.assert(
    fc.property(fc.nat(100_000), fc.string(), fc.ipV4(), (day, versionId, client) => {
      const hex = createHash('sha256').update(`${day} ${versionId} ${client}`).digest('hex').slice(0, 16);
      const digest = seenDigest(day, versionId, client);
      assert.is(digestHex(digest), hex);
      assert.equal(digestOfHex(hex), digest);
    }),
  );
});

test('DigestSet adds and finds exactly what a Set of hex digests does, across growth and crowded slots', () => {
  // Few distinct words: many digests share a slot, and (0, 0), the empty slot's mark, comes up.
  const word = fc.oneof(
    fc.constantFrom(0, 1, -1, 1024, 2 ** 31 - 1, -(2 ** 31)),
    fc.integer({ min: -5000, max: 5000 }),
  );
  fc.assert(
    fc.property(fc.array(fc.record({ high: word, low: word }), { minLength: 500, maxLength: 3000 }), (digests) => {
      const set = new DigestSet();
      const reference = new Set<string>();
      for (const digest of digests) {
        const hex = digestHex(digest);
        assert.is(set.has(digest), reference.has(hex));
        assert.is(set.add(digest), !reference.has(hex));
        reference.add(hex);
        assert.ok(set.has(digest));
      }
      assert.is(set.size, reference.size);
      for (const hex of reference) assert.ok(set.has(digestOfHex(hex)));
    }),
    { numRuns: 60 },
  );
});

test('DigestSet keeps every digest of a busy day (100,000 clients, grown many times)', () => {
  const set = new DigestSet();
  const digests = Array.from({ length: 100_000 }, (_, i) => seenDigest(20_000, 'v', `10.0.${i >> 8}.${i & 255}`));
  assert.ok(digests.every((digest) => set.add(digest)));
  assert.is(set.size, 100_000);
  assert.ok(digests.every((digest) => set.has(digest) && !set.add(digest)));
  assert.not.ok(set.has(seenDigest(20_001, 'v', '10.0.0.0')), 'another day is another digest');
});

test.run();
