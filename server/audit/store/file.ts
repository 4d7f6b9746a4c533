import { journalOf, type Journal } from '../../downloads/journal.ts';
import { withKeyLock, type Storage } from '../../storage.ts';
import { auditLine, parseAuditLines } from '../lines.ts';
import type { AuditStore } from './contract.ts';

/** The embedded store's audit log: `STORAGE_DIR/audit.jsonl`, one record a line, oldest first. */
export const AUDIT_KEY = 'audit.jsonl';
/** A line never exceeds this (what changed is a few fields): a torn line is found within it. */
const MAX_LINE = 16 * 1024;

/**
 * The audit log as an append-only JSON-lines file: each record appended whole and fdatasync'ed
 * under the file's lock (journal.ts); a writer killed mid-append leaves at most a torn last line,
 * which readers skip and the next writer cuts off before appending.
 */
export function fileAuditLog(storage: Storage): AuditStore {
  const journal = journalOf(storage, AUDIT_KEY);
  return {
    async append(record) {
      const line = `${auditLine(record)}\n`;
      if (line.length > MAX_LINE) throw new Error(`an audit record of ${line.length} bytes is over ${MAX_LINE}`);
      await withKeyLock(storage, AUDIT_KEY, async () => {
        await cutTornLine(journal);
        await journal.append(AUDIT_KEY, line);
      });
    },
    async read() {
      const { text } = await journal.readFrom(AUDIT_KEY, 0);
      // After the last newline: a line being written now, or torn by a kill.
      const whole = text.slice(0, text.lastIndexOf('\n') + 1);
      return parseAuditLines(whole.split('\n').filter((line) => line !== ''));
    },
  };
}

/** A last line without its newline can only be a killed writer's (the caller holds the lock): cut it off. */
async function cutTornLine(journal: Journal): Promise<void> {
  const size = await journal.size(AUDIT_KEY);
  if (size === 0) return;
  const from = Math.max(0, size - MAX_LINE - 1);
  const { text } = await journal.readFrom(AUDIT_KEY, from);
  if (text.endsWith('\n')) return;
  await journal.truncate(AUDIT_KEY, from + text.lastIndexOf('\n') + 1);
}
