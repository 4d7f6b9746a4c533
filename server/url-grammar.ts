import { pathRule, type PathRule } from './http/path-rule.ts';
import { OPENAPI_PATH } from './helpers/openapi-path.ts';
import { BADGE_RULES } from './badges/paths.ts';
import { BRAND_RULES } from './brands/paths.ts';
import { CHART_RULES } from './charts/paths.ts';
import { DOWNLOAD_RULES } from './downloads/paths.ts';
import { PAGE_RULES } from './page-paths.ts';
import { VERSION_RULES } from './versions/paths.ts';
import { PROJECT_RULES } from './project/paths.ts';

/** The endpoints of no capability: for load balancers and tools. */
export const OPERATION_RULES = {
  health: pathRule('/healthz'),
  document: pathRule(OPENAPI_PATH),
} as const;

/**
 * Every URL the service answers, by capability: each documented path and each path a build
 * precomputes is one rule's, and one rule's only (test/url-grammar.test.ts).
 */
export const URL_GRAMMAR: Readonly<Record<string, Readonly<Record<string, PathRule>>>> = {
  versions: VERSION_RULES,
  downloads: DOWNLOAD_RULES,
  brands: BRAND_RULES,
  charts: CHART_RULES,
  badges: BADGE_RULES,
  project: PROJECT_RULES,
  operations: OPERATION_RULES,
  pages: PAGE_RULES,
};
