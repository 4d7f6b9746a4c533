import { ClientSketch, SKETCH_BYTES } from './client-sketch.ts';
import { DigestSet, type Digest } from './digest-set.ts';

/**
 * Clients a day counts exactly: 100,000 digests take at most 2 MiB (DigestSet). Past that the day
 * counts approximately, in a sketch per field, so a day's memory is bounded whatever the number of
 * IPv6 /64s that download (they were 32 MB a day per million, kept SEEN_DAYS days).
 */
export const EXACT_CLIENTS = 100_000;

/**
 * One day's counted downloads by field, each client counted once per version. The first
 * `exactClients` distinct digests are kept and counted exactly; after them a digest not among
 * those goes to its field's HyperLogLog (ClientSketch), and the field's count is its exact count
 * plus the sketch's estimate. Deterministic: the same digests in the same order give the same
 * counts, which is how every process reading a day's journal agrees on them.
 */
export class SeenClients {
  private readonly exact = new DigestSet();
  private readonly exactCounts = new Map<string, number>();
  private readonly sketches = new Map<string, ClientSketch>();
  private readonly exactClients: number;

  constructor(exactClients = EXACT_CLIENTS) {
    this.exactClients = exactClients;
  }

  /** Whether the digest is known to be counted (a cheap check before a download is queued; past the bound, only the exact ones). */
  has(digest: Digest): boolean {
    return this.exact.has(digest);
  }

  /**
   * Counts a download; true when it changed what the day holds (a new exact client, or a sketch's
   * register raised), which is what must be journaled: the digests left out change nothing.
   */
  add(digest: Digest, field: string): boolean {
    if (this.exact.has(digest)) return false;
    if (this.exact.size < this.exactClients) {
      this.exact.add(digest);
      this.exactCounts.set(field, (this.exactCounts.get(field) ?? 0) + 1);
      return true;
    }
    let sketch = this.sketches.get(field);
    if (!sketch) this.sketches.set(field, (sketch = new ClientSketch()));
    return sketch.add(digest);
  }

  /** Downloads by field: exact below the bound, plus each field's estimate past it. */
  counts(): Record<string, number> {
    const counts: Record<string, number> = Object.fromEntries(this.exactCounts);
    for (const [field, sketch] of this.sketches) counts[field] = (counts[field] ?? 0) + sketch.estimate();
    return counts;
  }

  /** Every download of the day (the sum of counts()). */
  total(): number {
    let total = this.exact.size;
    for (const sketch of this.sketches.values()) total += sketch.estimate();
    return total;
  }

  /** Whether the day passed its exact bound. */
  get approximate(): boolean {
    return this.sketches.size > 0;
  }

  /** Bytes held: the exact digests' table and 16 KiB per sketch. */
  get bytes(): number {
    return this.exact.bytes + this.sketches.size * SKETCH_BYTES;
  }
}
