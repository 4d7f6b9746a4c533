// One of `npm test`'s worker processes (test/run.ts starts them): it runs the test files it is sent,
// one at a time, each by uvu as uvu's own CLI would, and answers with what the file printed. The
// modules every file imports (the server, the build, the OpenAPI check) load once per worker.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { ROOT } from './processes.ts';

const Message = z.object({ file: z.string().regex(/^[\w.-]+\.test\.ts$/) });

declare global {
  var UVU_DEFER: number | undefined;
  var UVU_INDEX: number | undefined;
  var UVU_QUEUE: unknown[][];
}

// Set before uvu loads: suites then wait for exec() instead of running on their own.
globalThis.UVU_DEFER = 1;
const uvu = await import('uvu');

process.on('message', (message) => void runFile(Message.parse(message).file));
// The run is over: exit now, whatever a file left running (its processes are stopped with this group).
process.on('disconnect', () => process.exit(0));

/** CPU time of this process and of its children that have exited, in ms (Linux's /proc/self/stat). */
function cpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // utime, stime, cutime, cstime: fields 14 to 17 of proc(5), counted from the state (field 3).
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return (ticks * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

async function runFile(file: string): Promise<void> {
  const cpuBefore = cpuMs();
  let output = '';
  const record = (chunk: string | Uint8Array, ...rest: unknown[]) => {
    output += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    const done = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    done?.();
    return true;
  };
  const { stdout, stderr } = { stdout: process.stdout.write, stderr: process.stderr.write };
  process.stdout.write = record as typeof process.stdout.write;
  process.stderr.write = record as typeof process.stderr.write;
  try {
    globalThis.UVU_QUEUE.length = 0;
    globalThis.UVU_QUEUE.push([file]);
    globalThis.UVU_INDEX = 0;
    await import(pathToFileURL(join(ROOT, 'test', file)).href);
    await uvu.exec();
  } catch (error) {
    output += `\n${error instanceof Error ? error.stack : String(error)}\n`;
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
    // exec() sets it for uvu's CLI; this process answers per file instead.
    process.exitCode = 0;
  }
  process.send!({ file, output, cpuMs: cpuMs() - cpuBefore, rss: process.memoryUsage().rss });
}
