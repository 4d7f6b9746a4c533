import type { AuditRecord } from '../schema.ts';

/** The log as read: its records oldest first, and how many stored records did not parse (skipped). */
export type AuditLog = { records: AuditRecord[]; unreadable: number };

/** The audit log: one record appended per change, read whole, oldest first. */
export type AuditStore = {
  /** Resolves once the record is stored durably (files: fdatasync'ed; Redis: acknowledged). */
  append(record: AuditRecord): Promise<void>;
  read(): Promise<AuditLog>;
};
