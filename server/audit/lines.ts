import { AuditRecord } from './schema.ts';
import type { AuditLog } from './store/contract.ts';

/**
 * A record as one line of ASCII JSON: every character past `~` written as a `\u` escape, so the
 * line's characters are its bytes (the journal's unit) and a name in any script survives.
 */
export function auditLine(record: AuditRecord): string {
  const json = JSON.stringify(AuditRecord.parse(record));
  return json.replace(/[\u007f-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Stored lines back into records: each parsed with the schema; one that does not parse is counted and skipped. */
export function parseAuditLines(lines: readonly string[]): AuditLog {
  const records: AuditRecord[] = [];
  let unreadable = 0;
  for (const line of lines) {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      unreadable++;
      continue;
    }
    const parsed = AuditRecord.safeParse(json);
    if (parsed.success) records.push(parsed.data);
    else unreadable++;
  }
  return { records, unreadable };
}
