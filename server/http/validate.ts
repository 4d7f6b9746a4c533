import { HTTPError, getQuery, type H3Event } from 'h3';
import type { z } from 'zod';

/**
 * Validates the query with a zod schema whose messages read after the parameter's name
 * ("size must be an integer from 1 to 2048"): one 400 naming every bad parameter and what is allowed.
 */
export function validQuery<T extends z.ZodType>(event: H3Event, schema: T): z.output<T> {
  const result = schema.safeParse(getQuery(event));
  if (result.success) return result.data;
  const message = result.error.issues.map((issue) => `${issue.path.join('.') || 'query'} ${issue.message}`).join('; ');
  throw new HTTPError({ status: 400, message });
}
