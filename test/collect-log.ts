import pino from 'pino';
import type { Log } from '../server/helpers/log.ts';

/**
 * A pino logger as main.ts makes one, writing to `lines` instead of stdout: each line's message
 * (the text operators read) at `level` and above, in the order written.
 */
export function collectLog(lines: string[], level: 'info' | 'warn' = 'warn'): Log {
  return pino({ level }, { write: (entry: string) => void lines.push((JSON.parse(entry) as { msg: string }).msg) });
}
