import { Ajv2020 } from 'ajv/dist/2020.js';
import { openApiDocument } from '../server/openapi.ts';
import { SHAPED_RULES } from '../server/endpoints.ts';

// Every answer the suite receives over HTTP is checked against the OpenAPI document: its status is
// documented for the operation, its content type and required headers are the documented ones, and
// a JSON body validates against the documented schema. 405, OPTIONS and unknown paths are checked
// against what the document says exists.

type Header = { required?: boolean; schema?: { pattern?: string } };
type ResponseSpec = { content?: Record<string, unknown>; headers?: Record<string, Header | { $ref: string }> };
type Operation = {
  responses: Record<string, ResponseSpec>;
  parameters?: { in: string; name: string; schema?: { pattern?: string } }[];
};

const doc = openApiDocument() as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { headers: Record<string, Header> };
};

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema({ ...openApiDocument(), $id: 'openapi' });

const SHAPED = new Set(SHAPED_RULES.map((rule) => rule.template));

/**
 * A path parameter's shape: any one segment, or, on the endpoints the server tells apart by their
 * parameters' shape, the pattern its schema documents (unanchored).
 */
const parameterShape = (template: string, name: string) => {
  if (!SHAPED.has(template)) return '[^/]+';
  const parameters = Object.values(doc.paths[template]!).flatMap((operation) => operation.parameters ?? []);
  const pattern = parameters.find((p) => p.in === 'path' && p.name === name)?.schema?.pattern;
  return pattern ? `(?:${pattern.replace(/^\^/, '').replace(/\$$/, '')})` : '[^/]+';
};

const TEMPLATES = Object.keys(doc.paths).map((template) => {
  const names = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  const literals = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  const source = literals.map((literal, i) => literal + (i < names.length ? parameterShape(template, names[i]!) : ''));
  return { template, pattern: new RegExp(`^${source.join('')}$`) };
});

/**
 * The documented path template a request path falls under (`{id}` is one segment of the shape its
 * schema documents, when it documents one); the most
 * specific when several match (`/download/{id}.sha256` over `/download/{id}`), as the router picks.
 */
export function templateOf(path: string): string | undefined {
  const literal = (template: string) => template.replace(/\{[^}]+\}/g, '').length;
  return TEMPLATES.filter(({ pattern }) => pattern.test(path))
    .map(({ template }) => template)
    .sort((a, b) => literal(b) - literal(a))[0];
}

const pointer = (...parts: string[]) => parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

const SITE_TYPES = ['text/html', 'text/css', 'text/javascript'];

/** Throws, naming the request, when an answer is not what the document promises. */
export async function checkAnswer(method: string, url: string, response: Response): Promise<void> {
  const path = new URL(url).pathname;
  const where = `${method} ${path} -> ${response.status}`;
  const fail = (reason: string): never => {
    throw new Error(`OpenAPI conformance: ${where}: ${reason}`);
  };
  const type = response.headers.get('content-type')?.split(';')[0]?.trim();
  // Only JSON bodies are read. Cancelling one branch of a tee settles only when both are, so no await.
  const body = type === 'application/json' && method !== 'HEAD' ? await response.text() : void response.body?.cancel();
  const template = templateOf(path);
  // The human site's pages, scripts and styles are files of the tree, outside the API; a page path
  // the site does not have is its HTML 404 page, and one not in its one form a redirect to it.
  if (!template && (method === 'GET' || method === 'HEAD') && !path.startsWith('/api/')) {
    if (response.status === 200 && SITE_TYPES.includes(type ?? '')) return;
    if (response.status === 404 && type === 'text/html') return;
    if (response.status === 301) {
      if (!response.headers.get('location')?.startsWith('/')) fail('a page redirect must name a path of this site');
      return;
    }
  }
  if (!template) {
    if (response.status !== 404)
      fail('an undocumented path must answer 404 (or be a page, script or style of the site)');
    return checkJson(body, 'openapi#/components/schemas/Error', fail);
  }
  const item = doc.paths[template]!;
  const allowed = Object.keys(item)
    .map((m) => m.toUpperCase())
    .flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
  if (method === 'OPTIONS') {
    if (response.status !== 204) fail('OPTIONS must answer 204');
    if (response.headers.get('allow') !== [...allowed, 'OPTIONS'].join(', '))
      fail(`Allow ${response.headers.get('allow')} is not the documented methods`);
    return;
  }
  const operationName = method === 'HEAD' ? 'get' : method.toLowerCase();
  const operation = item[operationName];
  if (!operation) {
    if (response.status !== 405) fail(`an undocumented method must answer 405`);
    if (response.headers.get('allow') !== [...allowed, 'OPTIONS'].join(', '))
      fail(`Allow ${response.headers.get('allow')} is not the documented methods`);
    return checkJson(body, 'openapi#/components/schemas/Error', fail);
  }
  const status = String(response.status);
  const spec = operation.responses[status];
  if (!spec) fail(`status not documented (documented: ${Object.keys(operation.responses).join(', ')})`);
  for (const [name, declared] of Object.entries(spec!.headers ?? {})) {
    const header = '$ref' in declared ? doc.components.headers[declared.$ref.split('/').at(-1)!]! : declared;
    const value = response.headers.get(name);
    if (value === null) {
      if (header.required) fail(`required header ${name} missing`);
      continue;
    }
    if (header.schema?.pattern && !new RegExp(header.schema.pattern).test(value))
      fail(`header ${name}: ${value} does not match ${header.schema.pattern}`);
  }
  if (!spec!.content || status === '304') return;
  if (!type || !(type in spec!.content))
    fail(`content type ${type} not documented (documented: ${Object.keys(spec!.content).join(', ')})`);
  if (type === 'application/json' && body !== undefined) {
    checkJson(
      body,
      `openapi#/${pointer('paths', template, operationName, 'responses', status, 'content', 'application/json', 'schema')}`,
      fail,
    );
  }
}

function checkJson(body: string | undefined, schemaRef: string, fail: (reason: string) => never): void {
  if (body === undefined) return;
  const validate = ajv.getSchema(schemaRef);
  if (!validate) fail(`no schema at ${schemaRef}`);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    fail(`body is not JSON: ${body.slice(0, 80)}`);
  }
  if (!validate!(value)) fail(`body does not match the schema: ${ajv.errorsText(validate!.errors)}`);
}

/** Wraps the global fetch so that every answer the suite receives passes checkAnswer. */
export function checkEveryAnswer(): void {
  const realFetch = globalThis.fetch;
  if ((realFetch as { conformance?: boolean }).conformance) return;
  const checked = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await realFetch(input, init);
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const url = input instanceof Request ? input.url : String(input);
    await checkAnswer(method, url, response.clone());
    return response;
  };
  globalThis.fetch = Object.assign(checked, { conformance: true }) as typeof fetch;
}
