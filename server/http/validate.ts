import { HTTPError, getQuery, type H3Event } from 'h3';
import { z } from 'zod';
import 'zod-openapi';

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

/**
 * An integer query parameter: digits only (no signs, exponents or spaces), then the range; absent
 * gives `fallback`, or undefined without one. The OpenAPI document shows it as the integer it is
 * rather than as the string it arrives as.
 */
export function queryInt(min: number, max: number, description: string): z.ZodType<number | undefined, string | undefined>;
export function queryInt(min: number, max: number, description: string, fallback: number): z.ZodType<number, string | undefined>;
export function queryInt(min: number, max: number, description: string, fallback?: number): z.ZodType<number | undefined, string | undefined> {
  const message = `must be an integer from ${min} to ${max}`;
  const int = z
    .string({ error: message })
    .regex(/^\d{1,5}$/, { error: message })
    .transform(Number)
    .refine((n) => n >= min && n <= max, { error: message });
  const documented = { type: 'integer', minimum: min, maximum: max, ...(fallback === undefined ? {} : { default: fallback }) };
  return int
    .optional()
    .transform((n) => n ?? fallback)
    .meta({
      description,
      override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
        for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
        Object.assign(jsonSchema, documented);
      },
    });
}
