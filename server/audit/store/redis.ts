import type { Redis } from 'ioredis';
import { redisKey, unavailable } from '../../storage.ts';
import { auditLine, parseAuditLines } from '../lines.ts';
import type { AuditStore } from './contract.ts';

/** The stream `depot:audit`: one entry a record, its JSON in the field `record`. */
const STREAM = redisKey('audit');
/** Entries read per XRANGE: the whole log is read in pages, never in one reply. */
const PAGE = 1000;

/** The audit log as a Redis stream (XADD), trimmed to its newest `maxRecords` entries. */
export function redisAuditLog(redis: Redis, maxRecords: number): AuditStore {
  return {
    async append(record) {
      await redis.xadd(STREAM, 'MAXLEN', maxRecords, '*', 'record', auditLine(record)).catch(unavailable);
    },
    async read() {
      const lines: string[] = [];
      let start = '-';
      // Bounded: the stream holds at most maxRecords entries (plus those appended while reading).
      for (let page = 0; page <= maxRecords / PAGE + 10; page++) {
        const entries = await redis.xrange(STREAM, start, '+', 'COUNT', PAGE).catch(unavailable);
        for (const [, fields] of entries) {
          const at = fields.indexOf('record');
          lines.push(at === -1 ? '' : (fields[at + 1] ?? ''));
        }
        if (entries.length < PAGE) break;
        start = `(${entries.at(-1)![0]}`;
      }
      return parseAuditLines(lines);
    },
  };
}
