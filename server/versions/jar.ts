import { unzipSync } from 'fflate';

/** The descriptors each platform reads from a plugin JAR. */
const PLUGIN_DESCRIPTORS = ['plugin.yml', 'paper-plugin.yml', 'bungee.yml', 'velocity-plugin.json'] as const;

/**
 * Lists a JAR's entries after checking it is a readable zip (central directory intact) that
 * carries a manifest or a plugin descriptor. Throws a one-line reason otherwise.
 */
export function inspectJar(bytes: Uint8Array): { entries: string[] } {
  const entries: string[] = [];
  try {
    checkZipDirectory(bytes);
    unzipSync(bytes, {
      filter: (file) => {
        entries.push(file.name);
        return false; // list only; nothing is inflated
      },
    });
  } catch (error) {
    throw new Error(`not a zip/JAR archive (${(error as Error).message})`);
  }
  const known = ['META-INF/MANIFEST.MF', ...PLUGIN_DESCRIPTORS];
  if (!entries.some((name) => known.includes(name))) {
    throw new Error(
      `a zip without META-INF/MANIFEST.MF or a plugin descriptor (${PLUGIN_DESCRIPTORS.join(', ')}): not a plugin JAR`,
    );
  }
  return { entries };
}

// APPNOTE.TXT 4.3: record signatures and sizes.
const END = 0x06054b50;
const END_SIZE = 22;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_END = 0x06064b50;
const DIRECTORY_ENTRY = 0x02014b50;
const DIRECTORY_ENTRY_SIZE = 46;
const LOCAL_HEADER = 0x04034b50;
const LOCAL_HEADER_SIZE = 30;
const ZIP64_EXTRA = 0x0001;

/** One entry as the central directory and its local header describe it; its data is `bytes[dataStart, dataEnd)`. */
export type ZipEntry = {
  /** As fflate decodes it: UTF-8 when the entry's flag says so, else one character per byte. */
  name: string;
  /** APPNOTE 4.4.5: 0 stored, 8 deflated. */
  method: number;
  /** APPNOTE 4.4.4: bit 0 encrypted. */
  flags: number;
  dataStart: number;
  dataEnd: number;
};

/**
 * Checks what fflate takes on trust: the end record's entry count, the directory's size and offset,
 * every directory entry's signature, and every local header it points to, all inside the file.
 * fflate reads as many entries as the end record says, past the directory's end; a count too small
 * hides entries that Java's class loader still finds. Throws a one-line reason. Returns the
 * entries in the directory's order, each one's data inside the file (checked here).
 */
export function checkZipDirectory(bytes: Uint8Array): ZipEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u16 = (at: number) => view.getUint16(at, true);
  const u32 = (at: number) => view.getUint32(at, true);
  const u64 = (at: number) => Number(view.getBigUint64(at, true));
  const end = findEndRecord(bytes, view);
  if (u16(end + 4) !== 0 || u16(end + 6) !== 0) throw new Error('a zip split over several disks');
  if (u16(end + 8) !== u16(end + 10))
    throw new Error(`the end record's entry counts disagree (${u16(end + 8)} and ${u16(end + 10)})`);
  let count = u16(end + 10);
  let size = u32(end + 12);
  let offset = u32(end + 16);
  let directoryLimit = end;
  if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff) {
    const locator = end - 20;
    if (locator < 0 || u32(locator) !== ZIP64_LOCATOR) throw new Error('the zip64 end record locator is missing');
    const zip64 = u64(locator + 8);
    if (zip64 + 56 > locator || u32(zip64) !== ZIP64_END) throw new Error('the zip64 end record is missing');
    if (u32(zip64 + 16) !== 0 || u32(zip64 + 20) !== 0 || u64(zip64 + 24) !== u64(zip64 + 32))
      throw new Error('a zip split over several disks');
    [count, size, offset, directoryLimit] = [u64(zip64 + 32), u64(zip64 + 40), u64(zip64 + 48), zip64];
  }
  const directoryEnd = offset + size;
  if (directoryEnd > directoryLimit)
    throw new Error(`the central directory (${size} bytes at ${offset}) runs past the end record at ${directoryLimit}`);
  let at = offset;
  const entries: ZipEntry[] = [];
  for (let entry = 0; entry < count; entry++) {
    if (at + DIRECTORY_ENTRY_SIZE > directoryEnd || u32(at) !== DIRECTORY_ENTRY)
      throw new Error(`the end record counts ${count} entries, the central directory holds ${entry}`);
    const nameLength = u16(at + 28);
    const extraLength = u16(at + 30);
    const next = at + DIRECTORY_ENTRY_SIZE + nameLength + extraLength + u16(at + 32);
    if (next > directoryEnd) throw new Error(`central directory entry ${entry + 1} runs past the directory`);
    let compressed = u32(at + 20);
    let local = u32(at + 42);
    // Zip64: the 0xFFFFFFFF fields are in the extra field, in this order (APPNOTE 4.5.3).
    const extra = findExtra(view, at + DIRECTORY_ENTRY_SIZE + nameLength, extraLength, ZIP64_EXTRA);
    if (extra !== null) {
      let field = extra;
      if (u32(at + 24) === 0xffffffff) field += 8;
      if (compressed === 0xffffffff) [compressed, field] = [u64(field), field + 8];
      if (local === 0xffffffff) local = u64(field);
    }
    if (local + LOCAL_HEADER_SIZE > offset || u32(local) !== LOCAL_HEADER)
      throw new Error(`central directory entry ${entry + 1} points to no local header (at ${local})`);
    const dataStart = local + LOCAL_HEADER_SIZE + u16(local + 26) + u16(local + 28);
    const dataEnd = dataStart + compressed;
    if (dataEnd > offset) throw new Error(`entry ${entry + 1}'s data runs into the central directory`);
    const flags = u16(at + 8);
    const name = bytes.subarray(at + DIRECTORY_ENTRY_SIZE, at + DIRECTORY_ENTRY_SIZE + nameLength);
    entries.push({ name: decodeName(name, flags), method: u16(at + 10), flags, dataStart, dataEnd });
    at = next;
  }
  if (at !== directoryEnd)
    throw new Error(
      `the end record counts ${count} entries, but the central directory holds more (${directoryEnd - at} bytes left)`,
    );
  return entries;
}

const UTF8 = new TextDecoder();
/** APPNOTE 4.4.4: bit 11 says the name is UTF-8. */
const UTF8_NAME = 0x800;

function decodeName(name: Uint8Array, flags: number): string {
  if (flags & UTF8_NAME) return UTF8.decode(name);
  let text = '';
  for (const byte of name) text += String.fromCharCode(byte);
  return text;
}

/** The end of central directory record: the last one whose comment ends exactly at the file's end. */
function findEndRecord(bytes: Uint8Array, view: DataView): number {
  const lowest = Math.max(0, bytes.length - END_SIZE - 0xffff);
  for (let at = bytes.length - END_SIZE; at >= lowest; at--)
    if (view.getUint32(at, true) === END && at + END_SIZE + view.getUint16(at + 20, true) === bytes.length) return at;
  throw new Error('no end of central directory record');
}

/** Where the data of extra field `id` starts within `length` bytes at `start`, or null. */
function findExtra(view: DataView, start: number, length: number, id: number): number | null {
  for (let at = start; at + 4 <= start + length; at += 4 + view.getUint16(at + 2, true))
    if (view.getUint16(at, true) === id) return at + 4 <= start + length ? at + 4 : null;
  return null;
}
