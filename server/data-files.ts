import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { describeIssues } from './helpers/describe-issues.ts';

/** A file of data/ (or of a built tree) that is not what its schema says; the message names the file and the field. */
export class DataError extends Error {}

/** Parses one input with a schema; on failure names the file and the field. */
export function parseFile<T extends z.ZodType>(schema: T, value: unknown, file: string): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new DataError(`${file}: ${describeIssues(result.error.issues)}`);
  return result.data;
}

export async function readJsonFile(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new DataError(`${file}: not valid JSON (${(error as Error).message})`);
  }
}

/** A JSON object (not an array, not null): what a record read from a file or a store must be before its fields are looked at. */
export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Text that may be JSON (a process's output, an answer's body): its value, or undefined when it is not JSON. */
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
