import { pathRule } from '../http/path-rule.ts';

/** Issue 17's download counts. */
export const DOWNLOAD_RULES = {
  counts: pathRule('/api/plugin-versions/downloads'),
} as const;
