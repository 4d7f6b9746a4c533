import type { Written } from '../../server/publish/worker-messages.ts';

/** What a change says while it runs: its build's progress lines, and the moment its record is committed. */
export type Progress = { log: (line: string) => void; written: (written: Written) => void };

/** The CLI's: progress on stderr; the commit is said by the command's answer. */
export const ON_STDERR: Progress = { log: (line) => console.error(line), written: () => {} };
