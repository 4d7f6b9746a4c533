// How long each kind of answer may be cached (SPEC 8, DESIGN). One table, named by what is served.
export const CACHE_CONTROL = {
  /** A version's JAR by id never changes. */
  versionFile: 'public, max-age=31536000, immutable',
  /** Latest answers and the list change with each release: short, and revalidated by ETag. */
  latest: 'public, max-age=60',
  versionList: 'public, max-age=60',
  /** One version's object by id: its isLatest changes with a release, its record with an edit. */
  versionObject: 'public, max-age=60',
  /** A miss may turn into a hit with the next release. */
  notFound: 'public, max-age=60',
  /** SPEC 8: original brand images 24 hours, resized ones 1 hour. */
  brandOriginal: 'public, max-age=86400',
  brandResized: 'public, max-age=3600',
  brandList: 'public, max-age=3600',
  /** SPEC 8: charts 5 minutes. */
  chart: 'public, max-age=300',
  /** Download counts and badges: 5 minutes, as charts. */
  downloads: 'public, max-age=300',
  badge: 'public, max-age=300',
  /** The plugin's own identity (data/project.json) changes only with a build. */
  project: 'public, max-age=300',
  /** The OpenAPI document changes only with a deployment. */
  apiDocument: 'public, max-age=3600',
  /** The site's pages change with each release; their scripts and styles are named by content. */
  sitePage: 'public, max-age=60',
  siteAsset: 'public, max-age=31536000, immutable',
  /** Issue 31: a lookup sent by POST (its answer depends on the body) is never stored. */
  postedLookup: 'no-store',
  /** A private chart may be kept by its owner's browser, never by a shared cache. */
  privateChart: 'private, max-age=300',
} as const;

/** A public 404's own headers: cached briefly, as CACHE_CONTROL.notFound says. */
export const NOT_FOUND_HEADERS = { 'cache-control': CACHE_CONTROL.notFound };

/** On every public answer: any web page may read it and its rate limit fields (CORS), and browsers never sniff its type. */
export const PUBLIC_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers':
    'RateLimit-Policy, RateLimit, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After',
  'x-content-type-options': 'nosniff',
} as const;
/** Every other answer (owners' charts, ingestion, health): no CORS, ever; never sniffed either. */
export const PRIVATE_HEADERS = { 'x-content-type-options': 'nosniff' } as const;

/** An SVG answer runs no script and loads nothing: only its own inline styles. */
export const SVG_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'";

/** The site's pages load only their own scripts, styles and images (the API's, on this origin). */
export const PAGE_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
