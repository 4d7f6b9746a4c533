import { join } from 'node:path';
import { z } from 'zod';
import { readJsonFile } from '../server/data-files.ts';
import { BUILD_RECORD } from '../server/tree/previous.ts';

/** Of a build record of any layout, only the code that built it. */
const RecordedCode = z.object({ code: z.string() });

/**
 * The line a build says when the current tree was built by other code (an upgrade, or a rollback):
 * none of its answers is reused, and the next tree holds this code's. Null when the same code built
 * it, or there is no tree. Only the record's `code` is read, so records of every older layout count.
 */
export async function describeOtherCode(treeDir: string | null, code: string): Promise<string | null> {
  if (!treeDir) return null;
  // No record, or not one a build wrote whole: the tree's code is unknown, so other code.
  const recorded = await readJsonFile(join(treeDir, BUILD_RECORD)).catch(() => undefined);
  if (RecordedCode.safeParse(recorded).data?.code === code) return null;
  return '[build] the current tree was built by other code (or another PUBLIC_URL): every answer is rendered again';
}
