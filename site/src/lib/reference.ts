import { OPENAPI_DOCUMENT, OPENAPI_PATH } from '../../../server/openapi.ts';

// The API reference page, read off the OpenAPI document: the same one /api/openapi.json serves,
// built from the zod schemas the routes validate with.

type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  default?: unknown;
  pattern?: string;
  format?: string;
  contentMediaType?: string;
  items?: Schema;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  propertyNames?: Schema;
  required?: string[];
  description?: string;
};
type Parameter = { name: string; in: string; required?: boolean; description?: string; schema: Schema };
type Response = { description: string; content?: Record<string, { schema?: Schema }>; headers?: Record<string, unknown> };
type Operation = {
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, Response>;
};

const doc = OPENAPI_DOCUMENT as unknown as {
  info: { title: string; version: string; description?: string };
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, { description?: string; scheme: string }> };
};

/** A schema in words, with links to the named schemas it uses: `integer from 1 to 365, default 7`, `array of PluginVersion`. */
export type Described = (string | { ref: string })[];

export function describeSchema(schema: Schema | undefined): Described {
  if (!schema) return ['any'];
  if (schema.$ref) return [{ ref: schema.$ref.split('/').at(-1)! }];
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
  const detail = schema.contentMediaType ? ` (${schema.contentMediaType} bytes)` : schema.format ? ` (${schema.format})` : '';
  return [`${base}${range}${detail}${nullable}`, ...withDefault(schema)];
}

function withDefault(schema: Schema): string[] {
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

function authOf(operation: Operation): string | undefined {
  if (!operation.security) return undefined;
  const schemes = operation.security.flatMap((requirement) => Object.keys(requirement));
  const optional = operation.security.some((requirement) => Object.keys(requirement).length === 0);
  return `${optional ? 'Optional: ' : ''}Authorization: Bearer <${schemes.join(' or ')}>`;
}

/** Every operation, grouped by the document's tags in their order. */
export function referenceSections() {
  const operations: (OperationView & { tag: string })[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      operations.push({
        tag: operation.tags?.[0] ?? 'other',
        anchor: `${method}-${path}`.replace(/[^a-z0-9]+/gi, '-').replace(/-+$/, '').toLowerCase(),
        method: method.toUpperCase(),
        path,
        summary: operation.summary ?? '',
        description: operation.description,
        auth: authOf(operation),
        parameters: (operation.parameters ?? []).map((p) => ({
          name: p.name,
          in: p.in,
          required: p.required ?? false,
          schema: describeSchema(p.schema),
          description: p.description ?? p.schema.description ?? '',
        })),
        body: Object.entries(operation.requestBody?.content ?? {}).map(([type, media]) => ({ type, schema: describeSchema(media.schema) })),
        responses: Object.entries(operation.responses).map(([status, response]) => ({
          status,
          description: response.description,
          types: Object.entries(response.content ?? {}).map(([type, media]) => ({
            type,
            schema: type.includes('json') ? describeSchema(media.schema) : undefined,
          })),
        })),
      });
    }
  }
  return doc.tags.map((tag) => ({ ...tag, operations: operations.filter((o) => o.tag === tag.name) }));
}

/** The named schemas (components), each as a table of its fields. */
export function referenceSchemas() {
  return Object.entries(doc.components.schemas).map(([name, schema]) => ({
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

export const API_INFO = { ...doc.info, documentPath: OPENAPI_PATH, securitySchemes: doc.components.securitySchemes };
