import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { H3Event } from 'h3';
import type { ServerRequest } from 'srvx';
import ipaddr from 'ipaddr.js';
import { IPV4, addressAllowList } from './addresses.ts';
import { sha256Hex } from '../helpers/digest.ts';

/**
 * The client's address: the socket's peer, unless that peer is a trusted proxy (TRUST_PROXY); then
 * the right-most X-Forwarded-For entry that is not itself a trusted proxy. The left-most entry is
 * whatever the client wrote, so it is never believed. An entry that is not an address stands for
 * a client of its own, `invalid:<digest>` (see forwardedClient), never for the proxy: else one
 * client behind the proxy could spend the budget of everyone behind it.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | null | undefined,
  isTrustedProxy: (address: string) => boolean,
): string | undefined {
  let address = peer && normalise(peer);
  if (!address || !forwardedFor || forwardedFor.trim() === '') return address;
  const hops = forwardedFor.split(',');
  while (address && isTrustedProxy(address) && hops.length > 0) address = forwardedClient(hops.pop()!.trim());
  return address;
}

/** IPv4-mapped IPv6 (::ffff:1.2.3.4) as the IPv4 address it carries; undefined when not an address. */
function normalise(address: string): string | undefined {
  // Strict dotted decimal is already canonical: most peers are, and parsing them costs a download's counting.
  if (IPV4.test(address)) return address;
  return ipaddr.isValid(address) ? ipaddr.process(address).toString() : undefined;
}

/** Hex groups, optionally ending in dotted decimal; no zone (`%eth0`), which names an interface, not a client. */
const IPV6 = /^[0-9a-f:]+(?::(?:\d{1,3}\.){3}\d{1,3})?$/i;

/**
 * One X-Forwarded-For entry as a client: its address in canonical form (a port, `1.2.3.4:5678` or
 * `[::1]:80`, dropped), or, for anything else, `invalid:<first 16 hex of its SHA-256>`: counted
 * apart from every address and from every other entry, and never matching an allow-list. ipaddr.js
 * alone would take `012.1.2.3`, `0x7f.1` or `127.1` for addresses other software reads differently.
 */
export function forwardedClient(entry: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(entry);
  const candidate = bracketed
    ? bracketed[1]!
    : /^[\d.]+:\d{1,5}$/.test(entry)
      ? entry.slice(0, entry.lastIndexOf(':'))
      : entry;
  const isV4 = IPV4.test(candidate);
  const isV6 = !isV4 && IPV6.test(candidate) && ipaddr.IPv6.isValid(candidate) && v4TailIsStrict(candidate);
  if (isV4) return candidate;
  if (isV6) return ipaddr.process(candidate).toString();
  return `${INVALID_PREFIX}${sha256Hex(entry).slice(0, 16)}`;
}

const INVALID_PREFIX = 'invalid:';

function v4TailIsStrict(address: string): boolean {
  const tail = /:([\d.]+)$/.exec(address)?.[1];
  return tail === undefined || !tail.includes('.') || IPV4.test(tail);
}

/**
 * The key a client is counted under: an IPv4 address as itself, an IPv6 address by its /64 (one
 * subscriber holds a whole /64). IPv4-mapped addresses count as IPv4, never as one IPv6 group.
 */
export function clientKey(address: string | undefined): string {
  if (address?.startsWith(INVALID_PREFIX)) return address;
  if (address && IPV4.test(address)) return address;
  if (!address || !ipaddr.isValid(address)) return 'unknown';
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}

/** TRUST_PROXY: which peers' X-Forwarded-For is believed. Empty trusts nobody. */
export function trustedProxies(entries: readonly string[]): (address: string) => boolean {
  if (entries.length === 0) return () => false;
  return addressAllowList(entries);
}

export type Client = { address: string | undefined; key: string };

const UNKNOWN_CLIENT: Client = { address: undefined, key: clientKey(undefined) };

/** Clients of connections that came straight from them (no trusted proxy): the same for every request. */
const DIRECT_CLIENTS = new WeakMap<Socket, Client>();

/**
 * The client of a Node request and its rate-limit key, worked out once per connection when the peer
 * is not a trusted proxy: the hot path parses no address.
 */
export function connectionClient(
  req: IncomingMessage,
  isTrustedProxy: (address: string) => boolean,
  socket: Socket | null = req.socket,
): Client {
  // A request whose connection is already gone (Node sets req.socket to null) has no peer to name.
  if (!socket) return UNKNOWN_CLIENT;
  const known = DIRECT_CLIENTS.get(socket);
  if (known) return known;
  const peer = socket.remoteAddress;
  const address = clientAddress(peer, req.headers['x-forwarded-for'] as string | undefined, isTrustedProxy);
  const client = { address, key: clientKey(address) };
  if (!peer || !isTrustedProxy(normalise(peer) ?? peer)) DIRECT_CLIENTS.set(socket, client);
  return client;
}

/** The client of a request (see clientAddress), once per request. In-process requests have none. */
export function requestClient(event: H3Event, isTrustedProxy: (address: string) => boolean): Client {
  const known = event.context.client;
  if (known) return known;
  const req = (event.req as ServerRequest).runtime?.node?.req;
  const client = req
    ? connectionClient(req as IncomingMessage, isTrustedProxy)
    : { address: undefined, key: clientKey(undefined) };
  event.context.client = client;
  return client;
}
