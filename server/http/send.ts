import { createReadStream } from 'node:fs';
import parseRange from 'range-parser';
import type { H3Event } from 'h3';
import { FastResponse, type ServerRequest } from 'srvx';
import { rateLimitFields } from './event-context.ts';
import {
  ENCODINGS,
  MIN_COMPRESSED_BYTES,
  chooseEncoding,
  compressLive,
  encodedEtag,
  identityEtag,
  isCompressible,
  type Encoding,
} from './compress.ts';

/** Bytes in memory, or a file on disk for answers too large to hold. */
export type Body = Uint8Array | { path: string };

export type Representation = {
  status: number;
  /** Lowercase names, without content-length. An `etag` enables 304; `accept-ranges: bytes` enables 206. */
  headers: Record<string, string>;
  size: number;
  body: Body;
  /**
   * The coding `body` is already in (the static tree keeps br and gzip files beside each JSON and
   * SVG file). Absent: identity, compressed here when the client asks and the answer is worth it.
   */
  encoding?: Encoding | 'identity';
};

/**
 * Answers a GET or HEAD with a representation: 304 on a matching If-None-Match, br or gzip for JSON
 * and SVG by Accept-Encoding, 206 or 416 for a single byte range (RFC 9110 14), no body for HEAD.
 * The static tree and the live routes share it. This is the hot path of every download and metadata
 * answer: srvx's FastResponse with plain header objects writes straight to the socket, where a
 * Headers object would cost a third.
 */
export function sendRepresentation(event: H3Event, rep: Representation): Response {
  const request = event.req;
  let { size, body } = rep;
  const extra = rateLimitFields(event);
  // (Object.assign: a two-object spread here measured a fifth slower end to end.)
  let headers = extra ? Object.assign({}, rep.headers, extra) : rep.headers;
  // Errors are small and never compressed: only successful JSON and SVG answers vary by coding.
  const compressible = rep.status === 200 && isCompressible(headers['content-type']);
  if (compressible && headers.vary === undefined) headers = { ...headers, vary: 'accept-encoding' };
  const live =
    rep.encoding === undefined &&
    compressible &&
    size >= MIN_COMPRESSED_BYTES &&
    body instanceof Uint8Array &&
    headers.etag !== undefined;
  const encoding = live ? chooseEncoding(requestHeader(request, 'accept-encoding'), ENCODINGS) : rep.encoding;
  if (encoding && encoding !== 'identity' && headers.etag) {
    headers = { ...headers, 'content-encoding': encoding, etag: encodedEtag(headers.etag, encoding) };
  }
  const etag = headers.etag;
  if (rep.status === 200 && etag && matchesEtag(requestHeader(request, 'if-none-match'), etag)) {
    return new FastResponse(null, { status: 304, headers: notModifiedHeaders(headers) });
  }
  if (live && encoding && encoding !== 'identity') {
    body = compressLive(body as Uint8Array, rep.headers.etag!, encoding);
    size = body.length;
  }
  const range =
    rep.status === 200 && headers['accept-ranges'] === 'bytes' ? requestHeader(request, 'range') : undefined;
  // RFC 9110 14.2: a range unit other than bytes is ignored (range-parser would read `items=0-5` as bytes).
  if (range && BYTES_UNIT.test(range) && (requestHeader(request, 'if-range') ?? etag) === etag) {
    const ranges = parseRange(size, range, { combine: true });
    if (ranges === -1) {
      // An error answer of the same endpoint: the same CORS, nosniff and rate-limit fields as its 200.
      const error = JSON.stringify({ error: `Range ${range} is outside the ${size} bytes of this file` });
      return new FastResponse(error, {
        status: 416,
        headers: {
          ...edgeHeaders(headers),
          'content-type': 'application/json; charset=utf-8',
          'content-range': `bytes */${size}`,
        },
      });
    }
    // A malformed header (-2) or several ranges: answer the whole file, as RFC 9110 allows.
    if (ranges !== -2 && ranges.length === 1 && ranges[0]) {
      const { start, end } = ranges[0];
      return new FastResponse(request.method === 'HEAD' ? null : slice(body, start, end), {
        status: 206,
        headers: {
          ...headers,
          'content-range': `bytes ${start}-${end}/${size}`,
          'content-length': String(end - start + 1),
        },
      });
    }
  }
  // srvx sets Content-Length itself for bytes; a stream or a HEAD answer needs it spelled out.
  if (request.method !== 'HEAD' && body instanceof Uint8Array) {
    return new FastResponse(body as Uint8Array<ArrayBuffer>, { status: rep.status, headers });
  }
  const full = request.method === 'HEAD' ? null : slice(body, 0, size - 1);
  return new FastResponse(full, { status: rep.status, headers: { ...headers, 'content-length': String(size) } });
}

/** Range units are case-insensitive (RFC 9110 14.1). */
const BYTES_UNIT = /^\s*bytes\s*=/i;

/** Headers an answer carries whatever its body: CORS, nosniff and the rate limit's. */
const EDGE_HEADER = /^(?:access-control-|x-content-type-options$|ratelimit|x-ratelimit-)/;

function edgeHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => EDGE_HEADER.test(name)));
}

/** If-None-Match holds: a 304 can be answered before the body is computed. */
export function isNotModified(request: Request, etag: string): boolean {
  return matchesEtag(requestHeader(request, 'if-none-match'), etag);
}

/** Reads a request header from Node's parsed object when there is one (no Headers object built). */
export function requestHeader(request: Request, name: string): string | undefined {
  const raw = (request as ServerRequest).runtime?.node?.req.headers;
  return raw ? (raw[name] as string | undefined) : (request.headers.get(name) ?? undefined);
}

function slice(body: Body, start: number, end: number): BodyInit | null {
  if (end < start) return new Uint8Array(0);
  if (body instanceof Uint8Array) return (body as Uint8Array<ArrayBuffer>).subarray(start, end + 1);
  // srvx pipes a Node stream straight into the socket.
  return createReadStream(body.path, { start, end }) as unknown as BodyInit;
}

function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  // Any coding of the same bytes revalidates: the client keeps whichever it was sent.
  const identity = identityEtag(etag);
  return ifNoneMatch.split(',').some((tag) => identityEtag(tag.trim().replace(/^W\//, '')) === identity);
}

const KEPT_ON_304 = ['etag', 'cache-control', 'vary', 'content-location', 'expires'];

function notModifiedHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => KEPT_ON_304.includes(name)));
}
