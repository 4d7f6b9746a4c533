import busboy from 'busboy';
import { createHash, randomInt } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { HTTPError, type H3Event } from 'h3';
import type { ServerRequest } from 'srvx';

/** The `metadata` part: a few fields and a changelog of at most 64 KiB, which JSON escaping can double. */
const METADATA_MAX_BYTES = 256 * 1024;
/** Boundaries and part headers around the two parts: a Content-Length beyond the parts' limits and this is refused unread. */
const FRAMING_BYTES = 16 * 1024;

export type Upload = {
  /** The temporary file holding the `file` part's bytes, in `dir`. */
  path: string;
  /** The `file` part's filename, as sent (its directories dropped). */
  fileName: string;
  size: number;
  sha256: string;
  /** The `metadata` part, parsed as JSON and not yet checked. */
  metadata: unknown;
  /** Deletes the temporary file; safe to call twice. */
  remove: () => Promise<void>;
};

type Limits = { maxBytes: number; dir: string };
type Received = { size: number; sha256: string };

/**
 * Reads a `multipart/form-data` body (issue 30): the part `file` streams to a temporary file in
 * `dir`, hashed as it arrives, never whole in memory; the part `metadata` is JSON. Refused as
 * HTTPErrors: 415 (not multipart), 413 (the file passes `maxBytes`: reading stops at once), 400 (a
 * part missing, unexpected or malformed). However it ends without an Upload, the file is gone.
 */
export async function receiveUpload(event: H3Event, { maxBytes, dir }: Limits): Promise<Upload> {
  const type = event.req.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) throw notMultipart();
  const length = Number(event.req.headers.get('content-length') ?? 0);
  if (length > maxBytes + METADATA_MAX_BYTES + FRAMING_BYTES) throw tooLarge(maxBytes);
  // A name the leftover sweep knows (writeFileAtomic's `.tmp-<pid>-<n>`): a kill -9 midway leaves
  // a file that the next start removes once this pid is gone.
  const path = join(dir, `upload.tmp-${process.pid}-${randomInt(2 ** 47)}`);
  const remove = () => rm(path, { force: true });
  try {
    const parts = await readParts(requestBody(event), type, { maxBytes, path });
    return { path, ...parts, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

/** The body as a Node stream: the request itself under Node (so a client's abort is seen as one), else the web stream. */
function requestBody(event: H3Event): Readable {
  const node = (event.req as ServerRequest).runtime?.node?.req;
  if (node) return node;
  if (!event.req.body) throw missingParts(['file', 'metadata']);
  return Readable.fromWeb(event.req.body as import('node:stream/web').ReadableStream<Uint8Array>);
}

type Parts = { fileName: string; metadata: unknown } & Received;

/** Parses the body's parts, writing `file` to `path`; settles once the body is read and the file is written, or at the first failure. */
function readParts(body: Readable, type: string, target: { maxBytes: number; path: string }): Promise<Parts> {
  return new Promise((resolve, reject) => {
    let file: { name: string; written: Promise<Received> } | undefined;
    let metadata: string | undefined;
    let failed = false;
    // Each part being read; a failure waits for them to stop, so no file is written after it settles.
    const reading: Promise<unknown>[] = [];
    const parser = busboy({
      headers: { 'content-type': type },
      // Browsers, undici and curl send a filename's UTF-8 bytes as they are; busboy would read them as latin1.
      defParamCharset: 'utf8',
      limits: { fieldSize: METADATA_MAX_BYTES, parts: 3, fieldNameSize: 100 },
    });
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      // Stop reading: nothing more of this body is parsed, and the part being written is destroyed.
      body.unpipe(parser);
      parser.destroy();
      void Promise.allSettled(reading).then(() => reject(error));
    };
    // busboy parses the rest of the chunk it holds after a failure destroys it: later parts are ignored.
    parser.on('file', (name, stream, info) => {
      if (failed) discard(stream);
      else if (name === 'file' && !file && !info.filename) {
        discard(stream);
        fail(noFileName());
      } else if (name === 'file' && !file) {
        const written = writePart(stream, target);
        reading.push(written.catch(fail));
        file = { name: info.filename!, written };
      } else if (name === 'metadata' && metadata === undefined) {
        metadata = '';
        reading.push(readText(stream, METADATA_MAX_BYTES).then((text) => (metadata = text), fail));
      } else {
        discard(stream);
        fail(unexpectedPart(name));
      }
    });
    parser.on('field', (name, value, info) => {
      // busboy makes a part without a filename a field: the JAR's name is its filename, so it is required.
      if (failed) return;
      if (name === 'file') fail(noFileName());
      else if (name !== 'metadata' || metadata !== undefined) fail(unexpectedPart(name));
      else if (info.valueTruncated) fail(metadataTooLong());
      else metadata = value;
    });
    parser.on('partsLimit', () => fail(badRequest('the body has more than the parts "file" and "metadata"')));
    parser.on('error', (error: Error) => fail(badRequest(`the multipart body is malformed: ${error.message}`)));
    parser.on('close', () => {
      if (failed) return;
      const missing = [file ? undefined : 'file', metadata === undefined ? 'metadata' : undefined];
      if (!file || metadata === undefined) return fail(missingParts(missing.filter((part) => part !== undefined)));
      const fileName = file.name;
      // A metadata file part is read by now: busboy closes once every part stream has ended.
      void Promise.all(reading)
        .then(async () => {
          if (!failed) resolve({ fileName, metadata: parseJson(metadata!), ...(await file!.written) });
        })
        .catch(fail);
    });
    // The client went away midway: Node's 'aborted' error (or a close before the end) settles it.
    body.once('error', fail);
    body.once('close', () => {
      if (!body.readableEnded)
        fail(Object.assign(new Error('the client closed the connection'), { code: 'ECONNRESET' }));
    });
    body.pipe(parser);
  });
}

/** A part not read: drained, and destroyed with the parser on failure, whose error is answered already. */
function discard(part: Readable): void {
  part.on('error', () => {}).resume();
}

/** Streams one part to `path`, counting and hashing each chunk on the way; a 413 at the first byte past `maxBytes`. */
async function writePart(part: Readable, { maxBytes, path }: { maxBytes: number; path: string }): Promise<Received> {
  const sha256 = createHash('sha256');
  let size = 0;
  const hash = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) return done(tooLarge(maxBytes));
      sha256.update(chunk);
      done(null, chunk);
    },
  });
  const out = createWriteStream(path, { flags: 'wx' });
  try {
    await pipeline(part, hash, out);
  } catch (error) {
    // Closed before the caller removes the file: a stream still opening would create it after.
    if (!out.closed) await once(out, 'close');
    throw error;
  }
  return { size, sha256: sha256.digest('hex') };
}

/** A small part sent as a file (`-F metadata=@meta.json`), as text, refused past `max` bytes. */
async function readText(part: Readable, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of part as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw metadataTooLong();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HTTPError({
      status: 400,
      message: `the part "metadata" is not JSON (${(error as Error).message})`,
      data: { field: 'metadata' },
    });
  }
}

const badRequest = (message: string) => new HTTPError({ status: 400, message });

const noFileName = () => badRequest('the part "file" must be a file with a filename: the JAR\'s name');

const unexpectedPart = (name: string) =>
  badRequest(`unexpected part ${JSON.stringify(name)}; send one part "file" (the JAR) and one part "metadata" (JSON)`);

const missingParts = (parts: string[]) =>
  badRequest(
    `missing the part${parts.length > 1 ? 's' : ''} ${parts.map((part) => `"${part}"`).join(' and ')}; send the JAR as "file" and its JSON as "metadata"`,
  );

const metadataTooLong = () =>
  new HTTPError({
    status: 400,
    message: `the part "metadata" is longer than ${METADATA_MAX_BYTES} bytes`,
    data: { field: 'metadata' },
  });

function notMultipart(): HTTPError {
  return new HTTPError({
    status: 415,
    message: 'the body must be multipart/form-data with a part "file" (the JAR) and a part "metadata" (JSON)',
  });
}

/** Connection: close, so Node does not read the rest of the body to reuse the connection. */
function tooLarge(maxBytes: number): HTTPError {
  return new HTTPError({
    status: 413,
    message: `the file is larger than ${maxBytes} bytes (PUBLISH_MAX_BYTES)`,
    data: { maxBytes },
    headers: { connection: 'close' },
  });
}
