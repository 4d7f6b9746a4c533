import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_SKETCH_ERROR } from '../server/downloads/client-sketch.ts';
import { DigestSet, digestHex, digestOfHex, seenDigest, type Digest } from '../server/downloads/digest-set.ts';
import { EXACT_CLIENTS, SeenClients } from '../server/downloads/seen-clients.ts';

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

// Issue 27 item 7: a day's seen clients are bounded: exact up to EXACT_CLIENTS, a sketch per field past it.

/** `count` distinct clients of one day and version, from `seed` (SHA-256 digests: uniform, as in production). */
const digestsOf = (seed: number, count: number) =>
  Array.from({ length: count }, (_, i) => seenDigest(20_000, 'v', `${seed}:${i}`));

test('SeenClients counts exactly below its bound, and within the documented error past it', () => {
  const FIELDS = ['plugin-1-a -', 'plugin-1-a PaperMC', 'plugin-2-b Folia'];
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 2000 }),
      fc.array(fc.record({ field: fc.constantFrom(...FIELDS), clients: fc.integer({ min: 0, max: 12_000 }) }), {
        minLength: 1,
        maxLength: 3,
      }),
      fc.nat(),
      (bound, groups, seed) => {
        const seen = new SeenClients(bound);
        const reference = new Map<string, number>();
        let exact = 0;
        groups.forEach(({ field, clients }, group) => {
          const digests = digestsOf(seed + group * 1_000_003, clients);
          // Each client twice: a repeat never counts again.
          for (const digest of [...digests, ...digests]) seen.add(digest, field);
          reference.set(field, (reference.get(field) ?? 0) + clients);
          exact += clients;
        });
        const counts = seen.counts();
        const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
        assert.is(seen.total(), total);
        if (exact <= bound) {
          assert.not.ok(seen.approximate);
          for (const [field, clients] of reference) assert.is(counts[field] ?? 0, clients, field);
          return;
        }
        assert.ok(seen.approximate);
        // Documented (README): past the bound, each field's estimate is within 3.5 % (4.3 standard errors).
        const tolerance = (n: number) => Math.ceil(MAX_SKETCH_ERROR * n) + 1;
        for (const [field, clients] of reference)
          assert.ok(
            Math.abs((counts[field] ?? 0) - clients) <= tolerance(clients),
            `${field}: ${counts[field]} for ${clients}`,
          );
        assert.ok(Math.abs(total - exact) <= tolerance(exact), `total ${total} for ${exact}`);
      },
    ),
    { numRuns: 40 },
  );
});

test('SeenClients replayed from what it said to journal holds the same counts (every process reading a journal agrees)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 500 }),
      fc.integer({ min: 0, max: 5000 }),
      fc.nat(),
      (bound, clients, seed) => {
        const writer = new SeenClients(bound);
        const journaled: Digest[] = [];
        const digests = digestsOf(seed, clients);
        for (const digest of [...digests, ...digests.slice(0, clients >> 1)])
          if (writer.add(digest, 'plugin-1-a -')) journaled.push(digest);
        const reader = new SeenClients(bound);
        for (const digest of journaled) reader.add(digest, 'plugin-1-a -');
        assert.equal(reader.counts(), writer.counts());
      },
    ),
    { numRuns: 30 },
  );
});

test("a day's memory stays bounded whatever the number of clients: 2 MiB of exact digests and 16 KiB per field", () => {
  const seen = new SeenClients();
  const digests = digestsOf(7, EXACT_CLIENTS + 150_000);
  for (const [i, digest] of digests.entries()) seen.add(digest, i % 2 ? 'plugin-1-a -' : 'plugin-1-a PaperMC');
  assert.ok(seen.bytes <= 2 * 1024 * 1024 + 2 * 16 * 1024, `${seen.bytes} bytes`);
  const total = seen.total();
  assert.ok(Math.abs(total - digests.length) <= MAX_SKETCH_ERROR * 150_000 + 1, `${total} for ${digests.length}`);
  // An unbounded set would hold them all: 250,000 digests need a 4 MiB table.
  const unbounded = new DigestSet();
  for (const digest of digests) unbounded.add(digest);
  assert.ok(unbounded.bytes > seen.bytes);
});

test.run();
