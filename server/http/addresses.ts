import ipaddr from 'ipaddr.js';

/**
 * An allow-list of addresses and CIDR ranges (PRIVATE_CHART_IPS). Empty allows every address.
 * IPv4-mapped IPv6 addresses (::ffff:1.2.3.4) are matched as the IPv4 address they carry.
 */
export function addressAllowList(entries: readonly string[]): (address: string | undefined) => boolean {
  const ranges = entries.map((entry) => (entry.includes('/') ? ipaddr.parseCIDR(entry) : cidrOf(ipaddr.parse(entry))));
  if (ranges.length === 0) return () => true;
  return (address) => {
    if (!address || !ipaddr.isValid(address)) return false;
    const parsed = ipaddr.process(address);
    return ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
  };
}

function cidrOf(address: ipaddr.IPv4 | ipaddr.IPv6): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  const plain =
    address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
      ? (address as ipaddr.IPv6).toIPv4Address()
      : address;
  return [plain, plain.kind() === 'ipv4' ? 32 : 128];
}

/** Checks one configured entry, for configuration parsing. */
export function isAddressOrRange(entry: string): boolean {
  return entry.includes('/') ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry);
}
