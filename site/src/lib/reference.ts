import { basename } from 'node:path';
import type { oas31 } from 'zod-openapi';
import { openApiDocument } from '../../../server/openapi.ts';
import { OPENAPI_PATH } from '../../../server/helpers/openapi-path.ts';
import { createApi } from '../../../server/app.ts';
import { EXAMPLE_NOW } from '../../../server/charts/example.ts';
import { createAppContext } from '../../../server/context.ts';
import { hashSecret } from '../../../server/http/auth.ts';
import { NO_ROUTES } from '../../../server/tree/routes.ts';
import { serveTree } from '../../../server/tree/serve.ts';
import { createMemoryStorage } from '../../../server/storage.ts';
import type { SiteRender } from './tree.ts';
import type { CatalogVersion } from '../../../server/versions/schema.ts';

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

function describeSchema(schema: Schema | undefined): Described {
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

type OperationView = {
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
        summary: withoutSpecReferences(operation.summary ?? ''),
        description: operation.description && withoutSpecReferences(operation.description),
        auth: authOf(operation),
        parameters: (operation.parameters ?? []).filter(isInline).map((p) => ({
          name: p.name,
          in: p.in,
          required: p.required ?? false,
          schema: describeSchema(p.schema),
          description: withoutSpecReferences(p.description ?? p.schema?.description ?? ''),
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
                    description: withoutSpecReferences(response.description),
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
  // A tag described only by where it is in SPEC says nothing to a reader: no description then.
  return (doc.tags ?? []).map((tag) => ({
    name: tag.name,
    description: tag.description?.includes('SPEC') ? undefined : tag.description,
    operations: operations.filter((o) => o.tag === tag.name),
  }));
}

/** The named schemas (components), each as a table of its fields. */
export function referenceSchemas() {
  const named = Object.entries(doc.components?.schemas ?? {}).flatMap(([name, schema]) =>
    isInline<oas31.SchemaObject>(schema) ? [[name, schema] as const] : [],
  );
  return named.map(([name, schema]) => ({
    name,
    description: schema.description && withoutSpecReferences(schema.description),
    fields: Object.entries(schema.properties ?? {}).map(([field, property]) => ({
      name: field,
      required: schema.required?.includes(field) ?? false,
      schema: describeSchema(property),
      description: withoutSpecReferences(property.description ?? ''),
    })),
    whole: schema.properties ? undefined : describeSchema(schema),
  }));
}

const securitySchemes = Object.fromEntries(
  Object.entries(doc.components?.securitySchemes ?? {}).flatMap(([name, scheme]) =>
    isInline<oas31.SecuritySchemeObject>(scheme) ? [[name, scheme] as const] : [],
  ),
);
/** `version` is the API's own (the document's info.version), `openapi` the OpenAPI version the document is written in. */
export const API_INFO = {
  ...doc.info,
  description: doc.info.description && withoutSpecReferences(doc.info.description),
  openapi: doc.openapi,
  documentPath: OPENAPI_PATH,
  securitySchemes,
};

/**
 * The document's text without its cross-references to the project's internal specification
 * ("(SPEC 4.4)", "SPEC 2.9: "): readers of the reference have no SPEC to look them up in.
 */
function withoutSpecReferences(text: string): string {
  const plain = text
    .replace(/\s*\(SPEC [\d.]+(?:-[\d.]+)?\)/g, '')
    .replace(/\bSPEC [\d.]+(?:-[\d.]+)?(?::\s*|\s+|$)/g, '')
    .trim();
  return plain.charAt(0).toUpperCase() + plain.slice(1);
}

/** An example request of an operation, and the answer the app gave it when this page was built. */
export type OperationExample = {
  /** curl's options and the request's path and query; the page puts the service's address before the path. */
  command: { options: string; path: string };
  status: number;
  statusText: string;
  headers: [string, string][];
  /** The body, shortened: JSON cut to a first item, text to its first lines, bytes to their count. */
  body: string;
};

/** Answer headers an example shows: what a client reads, not the caching and security ones. */
const SHOWN_HEADERS = ['content-type', 'content-length', 'content-disposition', 'content-location', 'location'];

/** The example server the chart and ingestion examples use: made in the examples' own memory store. */
const EXAMPLE_SERVER_ID = '4f9c2a7e-1b2d-4c3e-8f90-a1b2c3d4e5f6';
const EXAMPLE_INGEST_KEY = 'example-ingest-key';
/** What /healthz names as the tree served: its digest, which the site (part of the tree) cannot know. */
const EXAMPLE_TREE_NAME = '0f3c9a7d51e2b8c46a10';
/** The example server's owner's token, and the key signing the example's chart URL: in the examples' memory only. */
const EXAMPLE_OWNER_TOKEN = 'example-owner-token';
const EXAMPLE_CHART_URL_KEY = 'example-chart-url-key-'.padEnd(40, '0');
type ExamplePost = { credential?: { secret: string; shown: string }; body: unknown };

/** Each POST's body and the credential it is sent with (none for a lookup), given the newest release. */
const examplePosts = (newest: CatalogVersion): Record<string, ExamplePost> => ({
  '/api/servers/{id}/stats': {
    credential: { secret: EXAMPLE_INGEST_KEY, shown: '<ingest key>' },
    body: { players: 42 },
  },
  '/api/servers/{id}/chart-urls': {
    credential: { secret: EXAMPLE_OWNER_TOKEN, shown: '<owner token>' },
    body: { days: 7 },
  },
  // Modrinth's hash-based update lookup, as an updater sends it for the JAR it runs.
  '/api/plugin-versions/by-hash/update': {
    body: { hashes: [newest.sha512], algorithm: 'sha512', loaders: ['paper'], game_versions: [] },
  },
});
/** Queries that show an endpoint's options at work. */
const EXAMPLE_QUERIES: Record<string, string> = {
  '/api/image/brand/{brand}': 'variant=light&size=128&format=webp',
  '/api/charts/example': 'days=30&theme=dark',
  '/api/servers/{id}/chart/players': 'days=2',
};

/**
 * One example per operation, asked of the same app the origin runs, over this build's tree (its
 * catalog and files): real paths of the demo data and real answers, which cannot drift from the API.
 */
export async function referenceExamples(tree: SiteRender['tree']): Promise<Map<string, OperationExample>> {
  const release = tree.catalog.versions.filter(
    (v) => v.serverSoftware.includes('PaperMC') && (v.channel ?? 'release') === 'release',
  );
  const [newest, older = newest] = release;
  if (!newest) return new Map();
  const api = await exampleApp(tree);
  const valueOf = exampleValues(newest, older!);
  const posts = examplePosts(newest);
  const examples = new Map<string, OperationExample>();
  for (const [template, item] of Object.entries(doc.paths ?? {})) {
    for (const [method] of operationsOf(item)) {
      const names = [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
      if (names.some((name) => valueOf(template, name) === undefined)) continue;
      const post = method === 'post' ? posts[template] : undefined;
      // A request that changes something (a publish, an edit) needs a body and a token: shown without an example.
      if (method !== 'get' && !post) continue;
      const query = EXAMPLE_QUERIES[template];
      const path =
        template.replace(/\{(\w+)\}/g, (_, name: string) => valueOf(template, name)!) + (query ? `?${query}` : '');
      examples.set(`${method}-${template}`, await askExample(api, basename(tree.dir), method, path, post));
    }
  }
  return examples;
}

/** The app over this build's tree, with the example owner, server and chart-URL key stored. */
async function exampleApp(built: SiteRender['tree']) {
  const tree = { ...built, routes: built.routes ?? NO_ROUTES, source: '' };
  const ctx = createAppContext(createMemoryStorage(), {
    tree: () => tree,
    now: () => EXAMPLE_NOW,
    chartUrlKeys: [EXAMPLE_CHART_URL_KEY],
  });
  await ctx.tokens.add('example', EXAMPLE_OWNER_TOKEN);
  await ctx.servers.add({
    id: EXAMPLE_SERVER_ID,
    owner: 'example',
    private: false,
    ingestKeyHash: hashSecret(EXAMPLE_INGEST_KEY),
    createdAt: new Date(EXAMPLE_NOW).toISOString(),
  });
  // The precomputed answers from their files, as the origin serves them (at 10,000 versions the
  // list alone took a second to answer again); the rest live.
  const source = { tree: ctx.tree, files: ctx.files, downloads: ctx.downloads };
  return createApi(ctx, [serveTree(source)]);
}

/** A path parameter's example value, by the template it is in (undefined: no example for it). */
function exampleValues(newest: CatalogVersion, older: CatalogVersion) {
  const values: Record<string, string> = {
    serverSoftware: 'papermc',
    javaVersion: newest.javaVersion,
    current: older.pluginVersion,
    algorithm: 'sha256',
    hash: newest.sha256,
    brand: 'papermc',
    size: '180',
    variant: 'light',
    format: 'svg',
  };
  return (template: string, name: string) =>
    name === 'id'
      ? template.startsWith('/api/servers/')
        ? EXAMPLE_SERVER_ID
        : newest.id
      : name === 'file'
        ? template.includes('{variant}')
          ? '128.png'
          : 'light.webp'
        : values[name];
}

/** One request to the app, and the example the page shows of it. */
async function askExample(
  api: ReturnType<typeof createApi>,
  treeName: string,
  method: string,
  path: string,
  post: ExamplePost | undefined,
): Promise<OperationExample> {
  const response = await api.request(path, {
    method: method.toUpperCase(),
    ...(post && {
      headers: {
        ...(post.credential && { authorization: `Bearer ${post.credential.secret}` }),
        'content-type': 'application/json',
      },
      body: JSON.stringify(post.body),
    }),
  });
  const type = response.headers.get('content-type') ?? '';
  const file = /java-archive|image\/(?!svg)/.test(type);
  // The tree being built is in a staging folder named by the build's pid and a random suffix:
  // the page says what a server says (the same name, and so the same length, in every build).
  const answered = Buffer.from(await response.arrayBuffer());
  const body = file ? answered : Buffer.from(answered.toString('utf8').replaceAll(treeName, EXAMPLE_TREE_NAME));
  const options = post
    ? `-i -X POST ${post.credential ? `-H 'Authorization: Bearer ${post.credential.shown}' ` : ''}-H 'Content-Type: application/json' -d '${JSON.stringify(post.body)}'`
    : file
      ? '-OJ'
      : '-i';
  return {
    command: { options, path },
    status: response.status,
    statusText: STATUS_TEXT[response.status] ?? '',
    headers: SHOWN_HEADERS.flatMap((name) => {
      // The length a server sends with a body (one from a tree file has none until it is sent).
      if (name === 'content-length') return body.length > 0 ? [[name, String(body.length)] as [string, string]] : [];
      const value = response.headers.get(name);
      return value === null ? [] : [[name, value] as [string, string]];
    }),
    body: shortenBody(body, type),
  };
}

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created', 204: 'No Content', 404: 'Not Found' };

function shortenBody(bytes: Uint8Array, type: string): string {
  if (bytes.length === 0) return '';
  const text = Buffer.from(bytes).toString('utf8');
  if (type.includes('json')) {
    // As deep as fits in about a screen: the OpenAPI document by its top-level fields only.
    const value: unknown = JSON.parse(text);
    const shown = [3, 2].map((depth) => shortenJson(value, depth)).find((json) => json.split('\n').length <= 40);
    return shown ?? shortenJson(value, 1);
  }
  if (type.startsWith('text/') || type.includes('xml')) {
    const lines = text.trimEnd().split('\n');
    const shown = lines.slice(0, 4).map((line) => (line.length > 160 ? `${line.slice(0, 160)}…` : line));
    return [...shown, ...(lines.length > 4 ? ['…'] : [])].join('\n');
  }
  return `(${bytes.length.toLocaleString('en')} bytes of ${type.split(';')[0]})`;
}

/**
 * JSON with arrays of objects cut to their first item and what lies below `maxDepth` to a count,
 * each cut said unquoted (`… 13 more`), so that it cannot pass for a value of the answer.
 */
function shortenJson(value: unknown, maxDepth: number): string {
  const MARK = '\u2026 ';
  const count = (n: number, noun: string) => `${MARK}${n} ${noun}${n === 1 ? '' : 's'}`;
  const cut = (item: unknown, depth: number): unknown => {
    if (Array.isArray(item)) {
      if (item.length <= 6 && item.every((entry) => typeof entry !== 'object' || entry === null)) return item;
      if (depth >= maxDepth) return count(item.length, 'item');
      return [cut(item[0], depth + 1), ...(item.length > 1 ? [`${MARK}${item.length - 1} more`] : [])];
    }
    if (item && typeof item === 'object') {
      const entries = Object.entries(item);
      if (depth >= maxDepth) return count(entries.length, 'field');
      const shown = entries.slice(0, 8).map(([key, field]) => [key, cut(field, depth + 1)]);
      return Object.fromEntries(entries.length > 8 ? [...shown, [MARK, `${entries.length - 8} more fields`]] : shown);
    }
    if (typeof item === 'string' && item.length > 80) return `${item.slice(0, 80)}…`;
    return item;
  };
  return JSON.stringify(cut(value, 0), null, 2)
    .replace(/"\u2026 ": "([^"]*)"/g, '\u2026 $1')
    .replace(/"\u2026 ([^"]*)"/g, '\u2026 $1');
}
