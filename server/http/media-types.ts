/** The one table of what the depot serves: a file's extension -> its Content-Type. */
export const MEDIA_TYPES = {
  json: 'application/json; charset=utf-8',
  atom: 'application/atom+xml; charset=utf-8',
  jar: 'application/java-archive',
  png: 'image/png',
  webp: 'image/webp',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  /** Checksum sidecars (`sha256sum -c` format). */
  txt: 'text/plain; charset=utf-8',
} as const;
type MediaExtension = keyof typeof MEDIA_TYPES;

const BY_TYPE = new Map(Object.entries(MEDIA_TYPES).map(([ext, type]) => [type.split(';')[0]!, ext as MediaExtension]));

/** The extension a Content-Type (parameters aside) is stored under, or undefined when the depot serves no such type. */
export function extensionFor(contentType: string): MediaExtension | undefined {
  return BY_TYPE.get(contentType.split(';')[0]!.trim().toLowerCase());
}
