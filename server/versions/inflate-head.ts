// The first bytes of a raw DEFLATE stream (RFC 1951), decoded and no more: a class file's header
// is its first 8 bytes, and a zip bomb's first 8 bytes cost what anyone's do. fflate's streaming
// Inflate sizes its output for 128 KiB per push (about 60 µs an entry, 3 s at 50,000 classes);
// this stops at `want` bytes. A decoder in the manner of zlib's puff.c: canonical codes as counts
// and symbols, one bit at a time.

/** The first `want` bytes that `data[start, end)` inflates to, or why there are none. */
export type InflatedHead = { ok: true; bytes: Uint8Array } | { ok: false; problem: string };

type Huffman = { count: Uint16Array; symbol: Uint16Array };

const MAX_BITS = 15;
const LENGTH_BASE = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DISTANCE_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
  8193, 12289, 16385, 24577,
];
const DISTANCE_EXTRA = [
  0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
];
/** RFC 1951 3.2.7: the order code-length code lengths come in. */
const CODE_LENGTH_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

class Truncated extends Error {}

// The stream being read: module state rather than closures, since a JAR of 100,000 classes calls
// this 100,000 times (one call at a time: nothing here awaits).
let input: Uint8Array = new Uint8Array(0);
let at = 0;
let end = 0;
let buffer = 0;
let held = 0;

function bits(count: number): number {
  while (held < count) {
    if (at >= end) throw new Truncated();
    buffer |= input[at++]! << held;
    held += 8;
  }
  const value = buffer & ((1 << count) - 1);
  buffer >>>= count;
  held -= count;
  return value;
}

function decode(code: Huffman): number {
  let value = 0;
  let first = 0;
  let index = 0;
  for (let length = 1; length <= MAX_BITS; length++) {
    // bits(1), inlined: the code-length code of a dynamic block is read a bit at a time.
    if (held === 0) {
      if (at >= end) throw new Truncated();
      [buffer, held] = [input[at++]!, 8];
    }
    value |= buffer & 1;
    buffer >>>= 1;
    held--;
    const count = code.count[length]!;
    if (value - count < first) return code.symbol[index + (value - first)]!;
    index += count;
    first = (first + count) << 1;
    value <<= 1;
  }
  throw new Error('a code the block does not define');
}

/** Inflates `data[start, end)` until `want` bytes are out; reads nothing past `end`. */
export function inflateHead(data: Uint8Array, start: number, stop: number, want: number): InflatedHead {
  [input, at, end, buffer, held] = [data, start, stop, 0, 0];
  const out = new Uint8Array(want);
  let filled = 0;
  try {
    for (let last = 0; !last && filled < want;) {
      last = bits(1);
      const type = bits(2);
      if (type === 0) {
        // A stored block starts on a byte boundary: the rest of this byte is dropped, whole bytes
        // read ahead (decodeByTable) are given back.
        at -= held >>> 3;
        [buffer, held] = [0, 0];
        if (at + 4 > end) throw new Truncated();
        const length = data[at]! | (data[at + 1]! << 8);
        if ((length ^ (data[at + 2]! | (data[at + 3]! << 8))) !== 0xffff)
          throw new Error("a stored block's length and its complement disagree");
        at += 4;
        const take = Math.min(length, want - filled);
        if (at + take > end) throw new Truncated();
        out.set(data.subarray(at, at + take), filled);
        filled += take;
        at += length;
        continue;
      }
      if (type === 3) throw new Error('a block of type 3, which DEFLATE does not have');
      const [lengths, distances] = type === 1 ? fixedCodes() : dynamicCodes();
      for (;;) {
        if (filled === want) break;
        const symbol = decode(lengths);
        if (symbol < 256) out[filled++] = symbol;
        else if (symbol === 256) break;
        else {
          const index = symbol - 257;
          if (index >= LENGTH_BASE.length) throw new Error('a length code DEFLATE does not have');
          const length = LENGTH_BASE[index]! + bits(LENGTH_EXTRA[index]!);
          const code = decode(distances);
          if (code >= DISTANCE_BASE.length) throw new Error('a distance code DEFLATE does not have');
          const distance = DISTANCE_BASE[code]! + bits(DISTANCE_EXTRA[code]!);
          if (distance > filled) throw new Error('a distance back past the start');
          for (let copied = 0; copied < length && filled < want; copied++) out[filled] = out[filled++ - distance]!;
        }
      }
    }
  } catch (error) {
    if (error instanceof Truncated) return { ok: false, problem: 'its compressed data ends early' };
    return { ok: false, problem: `its compressed data is not DEFLATE (${(error as Error).message})` };
  } finally {
    input = new Uint8Array(0); // the JAR is not held on to
  }
  return { ok: true, bytes: filled === want ? out : out.subarray(0, filled) };
}

const emptyCode = (symbols: number): Huffman => ({
  count: new Uint16Array(MAX_BITS + 1),
  symbol: new Uint16Array(symbols),
});
const OFFSETS = new Uint16Array(MAX_BITS + 1);

/**
 * The canonical code of these lengths, written into `code`: how far from complete it is (0:
 * complete), or -1 when over-subscribed.
 */
function huffman(code: Huffman, lengths: ArrayLike<number>): number {
  const { count, symbol } = code;
  count.fill(0);
  for (let s = 0; s < lengths.length; s++) count[lengths[s]!]!++;
  if (count[0] === lengths.length) return 0;
  let left = 1;
  for (let length = 1; length <= MAX_BITS; length++) {
    left = (left << 1) - count[length]!;
    if (left < 0) return -1;
  }
  OFFSETS[1] = 0;
  for (let length = 1; length < MAX_BITS; length++) OFFSETS[length + 1] = OFFSETS[length]! + count[length]!;
  for (let s = 0; s < lengths.length; s++) if (lengths[s] !== 0) symbol[OFFSETS[lengths[s]!]!++] = s;
  return left;
}

let fixed: [Huffman, Huffman] | undefined;

/** RFC 1951 3.2.6. */
function fixedCodes(): [Huffman, Huffman] {
  if (fixed) return fixed;
  const lengths = new Uint8Array(288);
  lengths.fill(8, 0, 144).fill(9, 144, 256).fill(7, 256, 280).fill(8, 280, 288);
  fixed = [emptyCode(288), emptyCode(30)];
  huffman(fixed[0], lengths);
  huffman(fixed[1], new Uint8Array(30).fill(5));
  return fixed;
}

/**
 * `table[next bits]`: the symbol and its code's length (symbol | length << 8) for a complete code
 * of at most `width` bits. The code-length code is read for up to 316 symbols a block: a lookup
 * each, rather than a bit at a time.
 */
function fillTable(table: Uint16Array, code: Huffman, width: number) {
  let value = 0;
  let index = 0;
  for (let length = 1; length <= width; length++) {
    for (let n = 0; n < code.count[length]!; n++, value++) {
      let reversed = 0; // DEFLATE sends a code's bits from its most significant one
      for (let bit = 0; bit < length; bit++) reversed |= ((value >> bit) & 1) << (length - 1 - bit);
      const entry = code.symbol[index++]! | (length << 8);
      for (let fill = reversed; fill < 1 << width; fill += 1 << length) table[fill] = entry;
    }
    value <<= 1;
  }
}

function decodeByTable(table: Uint16Array, width: number, code: Huffman): number {
  while (held < width && at < end) {
    buffer |= input[at++]! << held;
    held += 8;
  }
  if (held < width) return decode(code); // the stream's last bits: one at a time
  const entry = table[buffer & ((1 << width) - 1)]!;
  const length = entry >> 8;
  buffer >>>= length;
  held -= length;
  return entry & 0xff;
}

// A dynamic block's codes, rebuilt in place for each block.
const CODE_LENGTHS = new Uint8Array(19);
const LENGTHS = new Uint8Array(286 + 30);
const LENGTHS_CODE = emptyCode(19);
const LENGTHS_BITS = 7;
const LENGTHS_TABLE = new Uint16Array(1 << LENGTHS_BITS);
const LITERALS = emptyCode(286);
const DISTANCES = emptyCode(30);

/** RFC 1951 3.2.7: the block's own codes, read from its header. */
function dynamicCodes(): [Huffman, Huffman] {
  const lengthCount = bits(5) + 257;
  const distanceCount = bits(5) + 1;
  const codeLengthCount = bits(4) + 4;
  if (lengthCount > 286 || distanceCount > 30) throw new Error('more codes than DEFLATE has');
  CODE_LENGTHS.fill(0);
  for (let i = 0; i < codeLengthCount; i++) CODE_LENGTHS[CODE_LENGTH_ORDER[i]!] = bits(3);
  if (huffman(LENGTHS_CODE, CODE_LENGTHS) !== 0) throw new Error('an incomplete code-length code');
  fillTable(LENGTHS_TABLE, LENGTHS_CODE, LENGTHS_BITS);
  const total = lengthCount + distanceCount;
  const lengths = LENGTHS.subarray(0, total);
  for (let i = 0; i < total;) {
    const symbol = decodeByTable(LENGTHS_TABLE, LENGTHS_BITS, LENGTHS_CODE);
    if (symbol < 16) {
      lengths[i++] = symbol;
      continue;
    }
    if (symbol === 16 && i === 0) throw new Error('a repeat with nothing before it');
    const value = symbol === 16 ? lengths[i - 1]! : 0;
    const repeat = symbol === 16 ? 3 + bits(2) : symbol === 17 ? 3 + bits(3) : 11 + bits(7);
    if (i + repeat > total) throw new Error('code lengths past the end');
    lengths.fill(value, i, i + repeat);
    i += repeat;
  }
  if (lengths[256] === 0) throw new Error('no end-of-block code');
  const literals = huffman(LITERALS, lengths.subarray(0, lengthCount));
  const distances = huffman(DISTANCES, lengths.subarray(lengthCount));
  // Incomplete codes are allowed only as a single code of one bit (as zlib's inflate and puff.c).
  if (literals < 0 || (literals > 0 && !singleBit(LITERALS, lengthCount)))
    throw new Error('an over-subscribed or incomplete literal/length code');
  if (distances < 0 || (distances > 0 && !singleBit(DISTANCES, distanceCount)))
    throw new Error('an over-subscribed or incomplete distance code');
  return [LITERALS, DISTANCES];
}

const singleBit = (code: Huffman, symbols: number) => code.count[0]! + code.count[1]! === symbols;
