import { HTTPError, type H3Event } from 'h3';
import { notFound } from './errors.ts';

/** Which methods each endpoint answers (HEAD wherever GET is): the basis of 405 and its Allow. */
const ENDPOINTS: [RegExp, string][] = [
  [/^\/api\/plugin-versions(?:\/latest\/[^/]+(?:\/[^/]+)?|\/download\/[^/]+|\/download\/latest\/[^/]+(?:\/[^/]+)?)?$/, 'GET, HEAD'],
  [/^\/api\/image\/brand(?:\/[^/]+)?$/, 'GET, HEAD'],
  [/^\/brand\/[^/]+\/[^/]+(?:\/[^/]+)?$/, 'GET, HEAD'],
  [/^\/api\/charts\/example$/, 'GET, HEAD'],
  [/^\/api\/servers\/[^/]+\/chart\/players$/, 'GET, HEAD'],
  [/^\/api\/servers\/[^/]+\/stats$/, 'POST'],
  [/^\/healthz$/, 'GET, HEAD'],
];

/** What no route answered: 405 with Allow for a known path and another method, a JSON 404 otherwise. */
export function unroutedError(event: H3Event): HTTPError {
  const path = event.url.pathname;
  const allow = ENDPOINTS.find(([pattern]) => pattern.test(path))?.[1];
  if (!allow || allow.includes(event.req.method)) return notFound(`No endpoint at ${path}`);
  return new HTTPError({ status: 405, message: `${event.req.method} is not allowed on ${path}; allowed: ${allow}`, headers: { allow } });
}
