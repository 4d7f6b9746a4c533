import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { HTTPResponse } from 'h3';
import parseRange from 'range-parser';

/** Bytes in memory, or a file on disk for answers too large to hold. */
export type Body = Uint8Array | { path: string };

export type Representation = {
  status: number;
  /** Lowercase names. An `etag` enables 304; `accept-ranges: bytes` enables 206. */
  headers: Record<string, string>;
  size: number;
  body: Body;
};

export function strongEtag(bytes: Uint8Array | string): string {
  return `"${createHash('sha256').update(bytes).digest('hex')}"`;
}

/**
 * Answers a GET or HEAD with a representation: 304 on a matching If-None-Match, 206 or 416 for a
 * single byte range (RFC 9110 14), no body for HEAD. The static tree and the live routes share it.
 */
export function sendRepresentation(request: Request, rep: Representation): HTTPResponse {
  const { headers, size } = rep;
  const etag = headers.etag;
  if (rep.status === 200 && etag && matchesEtag(request.headers.get('if-none-match'), etag)) {
    return new HTTPResponse(null, { status: 304, headers: notModifiedHeaders(headers) });
  }
  const range = request.headers.get('range');
  if (rep.status === 200 && range && headers['accept-ranges'] === 'bytes' && ifRangeHolds(request, etag)) {
    const ranges = parseRange(size, range, { combine: true });
    if (ranges === -1) {
      const body = JSON.stringify({ error: `Range ${range} is outside the ${size} bytes of this file` });
      return new HTTPResponse(body, {
        status: 416,
        headers: { 'content-type': 'application/json', 'content-range': `bytes */${size}` },
      });
    }
    // A malformed header (-2) or several ranges: answer the whole file, as RFC 9110 allows.
    if (ranges !== -2 && ranges.length === 1 && ranges[0]) {
      const { start, end } = ranges[0];
      return new HTTPResponse(request.method === 'HEAD' ? null : slice(rep.body, start, end), {
        status: 206,
        headers: { ...headers, 'content-range': `bytes ${start}-${end}/${size}`, 'content-length': String(end - start + 1) },
      });
    }
  }
  const body = request.method === 'HEAD' ? null : slice(rep.body, 0, size - 1);
  return new HTTPResponse(body, { status: rep.status, headers: { ...headers, 'content-length': String(size) } });
}

function slice(body: Body, start: number, end: number): BodyInit | null {
  if (end < start) return new Uint8Array(0);
  if (body instanceof Uint8Array) {
    const bytes = body as Uint8Array<ArrayBuffer>;
    return start === 0 && end === bytes.length - 1 ? bytes : bytes.subarray(start, end + 1);
  }
  // srvx pipes a Node stream straight into the socket.
  return createReadStream(body.path, { start, end }) as unknown as BodyInit;
}

function matchesEtag(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

function ifRangeHolds(request: Request, etag: string | undefined): boolean {
  const ifRange = request.headers.get('if-range');
  return !ifRange || ifRange.trim() === etag;
}

const KEPT_ON_304 = ['etag', 'cache-control', 'vary', 'content-location', 'expires'];

function notModifiedHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => KEPT_ON_304.includes(name)));
}
