import ipaddr from 'ipaddr.js';

/** Dotted decimal, four parts, no leading zeros: `012.1.2.3` (octal to some parsers), `0x7f.1` and `127.1` are not addresses here. */
export const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/**
 * An allow-list of addresses and CIDR ranges (PRIVATE_CHART_IPS, TRUST_PROXY). Empty allows every
 * address. IPv4-mapped IPv6 addresses (::ffff:1.2.3.4) are matched as the IPv4 address they carry.
 */
export function addressAllowList(entries: readonly string[]): (address: string | undefined) => boolean {
  const ranges = entries.map((entry) => (entry.includes('/') ? ipaddr.parseCIDR(entry) : cidrOf(ipaddr.parse(entry))));
  if (ranges.length === 0) return () => true;
  // Plain IPv4 (most clients, and every X-Forwarded-For hop a proxy adds) is matched as a number:
  // ipaddr.js parses an address in about a microsecond, which a counted download would pay.
  const ipv4Ranges = ranges
    .filter(([range]) => range.kind() === 'ipv4')
    .map(([range, bits]) => ({ prefix: prefixOf(ipv4Number(range.toString()), bits), bits }));
  return (address) => {
    if (!address) return false;
    if (IPV4.test(address)) {
      const number = ipv4Number(address);
      return ipv4Ranges.some(({ prefix, bits }) => prefixOf(number, bits) === prefix);
    }
    if (!ipaddr.isValid(address)) return false;
    const parsed = ipaddr.process(address);
    return ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
  };
}

/** Strict dotted decimal (IPV4) as its 32-bit number. */
function ipv4Number(address: string): number {
  let number = 0;
  let part = 0;
  for (let index = 0; index < address.length; index++) {
    const code = address.charCodeAt(index);
    if (code === 46) {
      number = number * 256 + part;
      part = 0;
    } else part = part * 10 + code - 48;
  }
  return number * 256 + part;
}

const prefixOf = (number: number, bits: number) => Math.floor(number / 2 ** (32 - bits));

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
