import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { H3Event } from 'h3';
import type { ServerRequest } from 'srvx';
import ipaddr from 'ipaddr.js';
import { addressAllowList } from './addresses.ts';

/**
 * The client's address: the socket's peer, unless that peer is a trusted proxy (TRUST_PROXY); then
 * the right-most X-Forwarded-For entry that is not itself a trusted proxy. The left-most entry is
 * whatever the client wrote, so it is never believed.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | null | undefined, isTrustedProxy: (address: string) => boolean): string | undefined {
  let address = peer && normalise(peer);
  if (!address || !forwardedFor) return address;
  const hops = forwardedFor.split(',').map((hop) => hop.trim()).filter(Boolean);
  while (address && isTrustedProxy(address) && hops.length > 0) {
    const hop = normalise(hops.pop()!);
    if (!hop) return address; // garbage in the header: stop at the last address we can vouch for
    address = hop;
  }
  return address;
}

/** IPv4-mapped IPv6 (::ffff:1.2.3.4) as the IPv4 address it carries; undefined when not an address. */
function normalise(address: string): string | undefined {
  return ipaddr.isValid(address) ? ipaddr.process(address).toString() : undefined;
}

/**
 * The key a client is counted under: an IPv4 address as itself, an IPv6 address by its /64 (one
 * subscriber holds a whole /64). IPv4-mapped addresses count as IPv4, never as one IPv6 group.
 */
export function clientKey(address: string | undefined): string {
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
export function connectionClient(req: IncomingMessage, isTrustedProxy: (address: string) => boolean, socket: Socket | null = req.socket): Client {
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
  const known = event.context.client as Client | undefined;
  if (known) return known;
  const req = (event.req as ServerRequest).runtime?.node?.req;
  const client = req ? connectionClient(req as IncomingMessage, isTrustedProxy) : { address: undefined, key: clientKey(undefined) };
  event.context.client = client;
  return client;
}
