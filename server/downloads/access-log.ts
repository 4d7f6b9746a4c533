import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { DAY } from '../helpers/duration.ts';
import { clientKey } from '../http/client-address.ts';
import { findSoftware } from '../versions/software.ts';
import { locationId, matchJarRoute } from './counter.ts';
import type { Download } from './counted.ts';

/** The log format the generated nginx.conf defines as `depot`: nginx's `combined`, then the answer's Content-Location. */
export const NGINX_LOG_FORMAT =
  '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$sent_http_content_location"';

/** A line of NGINX_LOG_FORMAT, or of `combined` (no Content-Location). */
const COMBINED =
  /^(\S+) \S+ \S+ \[([^\]]+)\] "(\S+) (\S+)(?: [^"]*)?" (\d{3}) \S+ "(?:[^"\\]|\\.)*" "(?:[^"\\]|\\.)*"(?: "([^"]*)")?/;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const TIME_LOCAL = /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/;

/** `$time_local`, e.g. `25/Nov/2026:15:30:00 +0100`, as epoch milliseconds. */
const TimeLocal = z.string().transform((text, ctx) => {
  const parts = TIME_LOCAL.exec(text);
  const month = parts ? MONTHS.indexOf(parts[2]!) : -1;
  if (!parts || month === -1) {
    ctx.addIssue({ code: 'custom', message: 'is not nginx $time_local' });
    return z.NEVER;
  }
  const [day, , year, hour, minute, second, sign, offsetHours, offsetMinutes] = parts.slice(1);
  const offset = (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000;
  return Date.UTC(Number(year), month, Number(day), Number(hour), Number(minute), Number(second)) - offset;
});

/** One log line's fields, checked as any input from outside. */
const LogLine = z.object({
  address: z.string().refine((address) => ipaddr.isValid(address), { error: 'is not an IP address' }),
  at: TimeLocal,
  method: z.string(),
  target: z.string(),
  status: z.coerce.number().int(),
  location: z.string().optional(),
});

/** What one line of an access log is to the counts. */
export type LogEntry =
  | { kind: 'download'; download: Download }
  /** Not a JAR answered 200/206 to a GET (a page, a HEAD, a 304). */
  | { kind: 'other' }
  /** A latest or resolve download logged without Content-Location: which version it was is unknown. */
  | { kind: 'unattributed' }
  | { kind: 'malformed' };

/** One line of nginx's access log as a download, if it is one. */
export function readLogLine(line: string): LogEntry {
  const match = COMBINED.exec(line);
  if (!match) return { kind: 'malformed' };
  const [, address, at, method, target, status, location] = match;
  const fields = LogLine.safeParse({ address, at, method, target, status, location });
  if (!fields.success) return { kind: 'malformed' };
  const entry = fields.data;
  if (entry.method !== 'GET' || (entry.status !== 200 && entry.status !== 206)) return { kind: 'other' };
  const route = matchJarRoute(entry.target);
  if (!route) return { kind: 'other' };
  const versionId = route.id ?? locationId(entry.location);
  if (!versionId) return { kind: 'unattributed' };
  let software;
  if (route.software !== undefined) {
    software = findSoftware(decodeURIComponentOr(route.software));
    if (!software) return { kind: 'other' };
  }
  return {
    kind: 'download',
    download: { day: Math.floor(entry.at / DAY), versionId, software, client: clientKey(entry.address) },
  };
}

function decodeURIComponentOr(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
