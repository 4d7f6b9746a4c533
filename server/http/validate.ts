import { HTTPError, getValidatedQuery, getValidatedRouterParams, type H3Event } from 'h3';
import { z } from 'zod';
import 'zod-openapi';
import { notFound } from './errors.ts';

/** A failed validation as h3 reports it (Standard Schema issues). */
type ValidationFailure = {
  issues: ReadonlyArray<{ message: string; path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined }>;
};

/**
 * The one 400 of the edge: every bad parameter named, each message reading after its name
 * ("size must be an integer from 1 to 2048").
 */
function invalidInput(failure: ValidationFailure, source: string): HTTPError {
  const name = (path: ValidationFailure['issues'][number]['path']) =>
    (path ?? []).map((segment) => String(typeof segment === 'object' ? segment.key : segment)).join('.') || source;
  return new HTTPError({
    status: 400,
    message: failure.issues.map((issue) => `${name(issue.path)} ${issue.message}`).join('; '),
  });
}

/** The query, validated by a zod schema whose messages read after the parameter's name. */
export function validateQuery<T extends z.ZodType>(event: H3Event, schema: T) {
  return getValidatedQuery(event, schema, { onError: (failure) => invalidInput(failure, 'query') });
}

/** The route's parameters (decoded once), validated the same way. */
export function validateParams<T extends z.ZodType>(event: H3Event, schema: T) {
  return getValidatedRouterParams(event, schema, { decode: true, onError: (failure) => invalidInput(failure, 'path') });
}

/**
 * Route parameters that name what is asked for (a software, a Java version, a brand): a name that
 * names nothing is a 404 (SPEC 7), not a 400, with the first issue's message, which says what
 * exists, and its `params` as fields of the body (SPEC 7.1: a brand's 404 lists `availableBrands`).
 */
export function validateNamedParams<T extends z.ZodType>(event: H3Event, schema: T, headers?: Record<string, string>) {
  return getValidatedRouterParams(event, schema, {
    decode: true,
    onError: (failure) => {
      const issue = failure.issues[0]! as ValidationFailure['issues'][number] & { params?: Record<string, unknown> };
      return notFound(issue.message, issue.params, headers);
    },
  });
}

/**
 * An integer query parameter: digits only (no signs, exponents or spaces), then the range; absent
 * gives `fallback`, or undefined without one. The OpenAPI document shows it as the integer it is
 * rather than as the string it arrives as.
 */
export function queryInt(
  min: number,
  max: number,
  description: string,
): z.ZodType<number | undefined, string | undefined>;
export function queryInt(
  min: number,
  max: number,
  description: string,
  fallback: number,
): z.ZodType<number, string | undefined>;
export function queryInt(
  min: number,
  max: number,
  description: string,
  fallback?: number,
): z.ZodType<number | undefined, string | undefined> {
  const message = `must be an integer from ${min} to ${max}`;
  const int = z
    .string({ error: message })
    .regex(/^\d{1,5}$/, { error: message })
    .transform(Number)
    .refine((n) => n >= min && n <= max, { error: message });
  const documented = {
    type: 'integer',
    minimum: min,
    maximum: max,
    ...(fallback === undefined ? {} : { default: fallback }),
  };
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
