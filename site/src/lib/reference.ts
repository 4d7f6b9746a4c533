import type { oas31 } from 'zod-openapi';
import { OPENAPI_PATH, openApiDocument } from '../../../server/openapi.ts';

// The API reference page, read off the OpenAPI document: the same one /api/openapi.json serves,
// built from the zod schemas the routes validate with.

// zod-openapi's own OpenAPI 3.1 types. Schemas, parameters and responses may each be a reference.
type Schema = oas31.SchemaObject | oas31.ReferenceObject;
const isInline = <T extends object>(item: T | oas31.ReferenceObject): item is T => !('$ref' in item);

const doc: oas31.OpenAPIObject = openApiDocument();
const operationsOf = (item: oas31.PathItemObject) =>
  (['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const).flatMap((method) =>
    item[method] ? [[method, item[method]] as const] : [],
  );

/** A schema in words, with links to the named schemas it uses: `integer from 1 to 365, default 7`, `array of PluginVersion`. */
export type Described = (string | { ref: string })[];

export function describeSchema(schema: Schema | undefined): Described {
  if (!schema) return ['any'];
  if (!isInline(schema)) return [{ ref: schema.$ref.split('/').at(-1)! }];
  if (schema.anyOf) return schema.anyOf.flatMap((s, i) => [...(i > 0 ? [' or '] : []), ...describeSchema(s)]);
  if (schema.const !== undefined) return [JSON.stringify(schema.const)];
  if (schema.enum) return [`one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`, ...withDefault(schema)];
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? 'any'];
  const base = types.filter((t) => t !== 'null').join(' or ');
  const nullable = types.includes('null') ? ' or null' : '';
  if (base === 'array') return ['array of ', ...describeSchema(schema.items), nullable];
  if (base === 'object' && schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    return ['map to ', ...describeSchema(schema.additionalProperties), nullable];
  }
  const range =
    schema.minimum !== undefined && schema.maximum !== undefined
      ? ` from ${schema.minimum} to ${schema.maximum}`
      : schema.exclusiveMinimum !== undefined
        ? ` above ${schema.exclusiveMinimum}`
        : '';
  const detail = schema.contentMediaType
    ? ` (${schema.contentMediaType} bytes)`
    : schema.format
      ? ` (${schema.format})`
      : '';
  return [`${base}${range}${detail}${nullable}`, ...withDefault(schema)];
}

function withDefault(schema: oas31.SchemaObject): string[] {
  return schema.default === undefined ? [] : [`, default ${JSON.stringify(schema.default)}`];
}

export type OperationView = {
  anchor: string;
  method: string;
  path: string;
  summary: string;
  description: string | undefined;
  auth: string | undefined;
  parameters: { name: string; in: string; required: boolean; schema: Described; description: string }[];
  body: { type: string; schema: Described }[];
  responses: { status: string; description: string; types: { type: string; schema: Described | undefined }[] }[];
};

function authOf(operation: oas31.OperationObject): string | undefined {
  if (!operation.security) return undefined;
  const schemes = operation.security.flatMap((requirement) => Object.keys(requirement));
  const optional = operation.security.some((requirement) => Object.keys(requirement).length === 0);
  return `${optional ? 'Optional: ' : ''}Authorization: Bearer <${schemes.join(' or ')}>`;
}

/** Every operation, grouped by the document's tags in their order. */
export function referenceSections() {
  const operations: (OperationView & { tag: string })[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of operationsOf(item)) {
      operations.push({
        tag: operation.tags?.[0] ?? 'other',
        anchor: `${method}-${path}`
          .replace(/[^a-z0-9]+/gi, '-')
          .replace(/-+$/, '')
          .toLowerCase(),
        method: method.toUpperCase(),
        path,
        summary: operation.summary ?? '',
        description: operation.description,
        auth: authOf(operation),
        parameters: (operation.parameters ?? []).filter(isInline).map((p) => ({
          name: p.name,
          in: p.in,
          required: p.required ?? false,
          schema: describeSchema(p.schema),
          description: p.description ?? p.schema?.description ?? '',
        })),
        body: Object.entries(
          (operation.requestBody && isInline(operation.requestBody) ? operation.requestBody.content : undefined) ?? {},
        ).map(([type, media]) => ({ type, schema: describeSchema(media.schema) })),
        responses: Object.entries(operation.responses ?? {}).flatMap(
          ([status, response]: [string, oas31.ResponseObject | oas31.ReferenceObject]) =>
            !isInline(response)
              ? []
              : [
                  {
                    status,
                    description: response.description,
                    types: Object.entries(response.content ?? {}).map(([type, media]) => ({
                      type,
                      schema: type.includes('json') ? describeSchema(media.schema) : undefined,
                    })),
                  },
                ],
        ),
      });
    }
  }
  return (doc.tags ?? []).map((tag) => ({ ...tag, operations: operations.filter((o) => o.tag === tag.name) }));
}

/** The named schemas (components), each as a table of its fields. */
export function referenceSchemas() {
  const named = Object.entries(doc.components?.schemas ?? {}).flatMap(([name, schema]) =>
    isInline<oas31.SchemaObject>(schema) ? [[name, schema] as const] : [],
  );
  return named.map(([name, schema]) => ({
    name,
    description: schema.description,
    fields: Object.entries(schema.properties ?? {}).map(([field, property]) => ({
      name: field,
      required: schema.required?.includes(field) ?? false,
      schema: describeSchema(property),
      description: property.description ?? '',
    })),
    whole: schema.properties ? undefined : describeSchema(schema),
  }));
}

const securitySchemes = Object.fromEntries(
  Object.entries(doc.components?.securitySchemes ?? {}).flatMap(([name, scheme]) =>
    isInline<oas31.SecuritySchemeObject>(scheme) ? [[name, scheme] as const] : [],
  ),
);
export const API_INFO = { ...doc.info, documentPath: OPENAPI_PATH, securitySchemes };
