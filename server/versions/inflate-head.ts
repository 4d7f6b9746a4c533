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

/** Inflates `data[start, end)` until `want` bytes are out; reads nothing past `end`. */
export function inflateHead(data: Uint8Array, start: number, end: number, want: number): InflatedHead {
  const out = new Uint8Array(want);
  let filled = 0;
  let at = start;
  let buffer = 0;
  let held = 0;
  const bits = (count: number): number => {
    while (held < count) {
      if (at >= end) throw new Truncated();
      buffer |= data[at++]! << held;
      held += 8;
    }
    const value = buffer & ((1 << count) - 1);
    buffer >>>= count;
    held -= count;
    return value;
  };
  const decode = (code: Huffman): number => {
    let value = 0;
    let first = 0;
    let index = 0;
    for (let length = 1; length <= MAX_BITS; length++) {
      value |= bits(1);
      const count = code.count[length]!;
      if (value - count < first) return code.symbol[index + (value - first)]!;
      index += count;
      first = (first + count) << 1;
      value <<= 1;
    }
    throw new Error('a code the block does not define');
  };
  try {
    for (let last = 0; !last && filled < want;) {
      last = bits(1);
      const type = bits(2);
      if (type === 0) {
        [buffer, held] = [0, 0]; // a stored block starts on a byte boundary
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
      const [lengths, distances] = type === 1 ? fixedCodes() : dynamicCodes(bits, decode);
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
  }
  return { ok: true, bytes: filled === want ? out : out.subarray(0, filled) };
}

/** Counts and symbols of the canonical code of these lengths; undefined when over-subscribed. */
function huffman(lengths: ArrayLike<number>): { code: Huffman; left: number } | undefined {
  const count = new Uint16Array(MAX_BITS + 1);
  for (let symbol = 0; symbol < lengths.length; symbol++) count[lengths[symbol]!]!++;
  let left = 1;
  for (let length = 1; length <= MAX_BITS; length++) {
    left = (left << 1) - count[length]!;
    if (left < 0) return undefined;
  }
  const offsets = new Uint16Array(MAX_BITS + 1);
  for (let length = 1; length < MAX_BITS; length++) offsets[length + 1] = offsets[length]! + count[length]!;
  const symbol = new Uint16Array(lengths.length);
  for (let s = 0; s < lengths.length; s++) if (lengths[s] !== 0) symbol[offsets[lengths[s]!]!++] = s;
  return { code: { count, symbol }, left: count[0] === lengths.length ? 0 : left };
}

let fixed: [Huffman, Huffman] | undefined;

/** RFC 1951 3.2.6. */
function fixedCodes(): [Huffman, Huffman] {
  if (fixed) return fixed;
  const lengths = new Uint8Array(288);
  lengths.fill(8, 0, 144).fill(9, 144, 256).fill(7, 256, 280).fill(8, 280, 288);
  fixed = [huffman(lengths)!.code, huffman(new Uint8Array(30).fill(5))!.code];
  return fixed;
}

/** RFC 1951 3.2.7: the block's own codes, read from its header. */
function dynamicCodes(bits: (count: number) => number, decode: (code: Huffman) => number): [Huffman, Huffman] {
  const lengthCount = bits(5) + 257;
  const distanceCount = bits(5) + 1;
  const codeLengthCount = bits(4) + 4;
  if (lengthCount > 286 || distanceCount > 30) throw new Error('more codes than DEFLATE has');
  const codeLengths = new Uint8Array(19);
  for (let i = 0; i < codeLengthCount; i++) codeLengths[CODE_LENGTH_ORDER[i]!] = bits(3);
  const lengthsCode = huffman(codeLengths);
  if (!lengthsCode || lengthsCode.left !== 0) throw new Error('an incomplete code-length code');
  const lengths = new Uint8Array(lengthCount + distanceCount);
  for (let i = 0; i < lengths.length;) {
    const symbol = decode(lengthsCode.code);
    if (symbol < 16) {
      lengths[i++] = symbol;
      continue;
    }
    if (symbol === 16 && i === 0) throw new Error('a repeat with nothing before it');
    const value = symbol === 16 ? lengths[i - 1]! : 0;
    const repeat = symbol === 16 ? 3 + bits(2) : symbol === 17 ? 3 + bits(3) : 11 + bits(7);
    if (i + repeat > lengths.length) throw new Error('code lengths past the end');
    lengths.fill(value, i, i + repeat);
    i += repeat;
  }
  if (lengths[256] === 0) throw new Error('no end-of-block code');
  const literals = huffman(lengths.subarray(0, lengthCount));
  const distances = huffman(lengths.subarray(lengthCount));
  // Incomplete codes are allowed only as a single code of one bit (as zlib's inflate and puff.c).
  if (!literals || (literals.left !== 0 && !singleBit(literals.code, lengthCount)))
    throw new Error('an over-subscribed or incomplete literal/length code');
  if (!distances || (distances.left !== 0 && !singleBit(distances.code, distanceCount)))
    throw new Error('an over-subscribed or incomplete distance code');
  return [literals.code, distances.code];
}

const singleBit = (code: Huffman, symbols: number) => code.count[0]! + code.count[1]! === symbols;
