import { PLUGIN_VERSION_ID } from '../versions/schema.ts';
import { SERVER_SOFTWARE, type ServerSoftware } from '../versions/software.ts';
import { digestOfHex, type Digest } from './digest-set.ts';

/** A count's field: `<version id> <software>`, `-` for a download by id. */
export const FIELD = new RegExp(`^(${PLUGIN_VERSION_ID.source.slice(1, -1)}) (-|${SERVER_SOFTWARE.join('|')})$`);
export const countField = (versionId: string, software: ServerSoftware | undefined) =>
  `${versionId} ${software ?? '-'}`;

/** A line of a day's journal (embedded store): who was counted (a seen digest) and under which field. */
const LINE = new RegExp(`^([0-9a-f]{16}) (${FIELD.source.slice(1, -1)})$`);
/**
 * The whole line that ends a malformed one: a torn append (a full disk, before appends were cut
 * back) followed by the next whole append. A field has exactly one space, so only the real line's
 * start leaves a suffix of this shape.
 */
const LINE_AT_END = new RegExp(`([0-9a-f]{16}) (${FIELD.source.slice(1, -1)})$`);

type JournalRecord = Digest & { field: string };

/** What a journal's text holds: its records, and what was not a record. */
export type JournalLines = {
  records: JournalRecord[];
  /** Text that is no record (a torn line's part), each as it stood; the whole line after it is kept. */
  malformed: string[];
  /** Characters of whole lines read (the text up to its last newline). */
  whole: number;
};

/** Reads a journal's text up to its last newline (after it: a line still being written, or torn by a kill). */
export function readJournalLines(text: string): JournalLines {
  const whole = text.lastIndexOf('\n') + 1;
  const records: JournalRecord[] = [];
  const malformed: string[] = [];
  let start = 0;
  while (start < whole) {
    const end = text.indexOf('\n', start);
    const line = text.slice(start, end);
    start = end + 1;
    if (line === '') continue;
    const match = LINE.exec(line) ?? LINE_AT_END.exec(line);
    if (!match) {
      malformed.push(line);
      continue;
    }
    if (match.index > 0) malformed.push(line.slice(0, match.index));
    records.push({ ...digestOfHex(match[1]!), field: match[2]! });
  }
  return { records, malformed, whole };
}
