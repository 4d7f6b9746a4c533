import type { z } from 'zod';

/** One readable line per zod issue: `serverSoftware[1]: Unknown server software "Foo"; ...`. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root = '(root)'): string {
  return issues.map((issue) => `${formatPath(issue.path, root)}: ${issue.message}`).join('; ');
}

function formatPath(path: readonly PropertyKey[], root: string): string {
  if (path.length === 0) return root;
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('');
}
