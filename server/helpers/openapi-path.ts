/** Where the OpenAPI document is served: its own module, so that the build names it without loading the document's schemas. */
export const OPENAPI_PATH = '/api/openapi.json';
