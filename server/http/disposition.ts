import { create as contentDisposition } from 'content-disposition';

/** RFC 6266 via content-disposition (filename* when not ASCII), with the plain filename always quoted. */
export function dispositionHeader(type: 'attachment' | 'inline', fileName: string): string {
  return contentDisposition(fileName, { type }).replace(/; filename=([^";]+)(;|$)/, '; filename="$1"$2');
}
