import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { clientAddress, clientKey, trustedProxies } from '../server/http/client-address.ts';

const address = suite('clientAddress');
const proxies = trustedProxies(['10.0.0.0/8', '::1']);
const cases: [string, string | undefined, string | null, (a: string) => boolean, string | undefined][] = [
  ['no proxy trusted: the peer, whatever the header says', '203.0.113.7', '198.51.100.1', trustedProxies([]), '203.0.113.7'],
  ['a forged header from an untrusted peer is ignored', '203.0.113.7', '1.1.1.1, 2.2.2.2', proxies, '203.0.113.7'],
  ['behind one trusted proxy: the right-most entry', '10.0.0.2', '198.51.100.1', proxies, '198.51.100.1'],
  ['a client that forges the left-most entry gains nothing', '10.0.0.2', '1.1.1.1, 198.51.100.1', proxies, '198.51.100.1'],
  ['two trusted proxies are skipped', '10.0.0.2', '198.51.100.1, 10.0.0.9', proxies, '198.51.100.1'],
  ['IPv4-mapped peers count as IPv4', '::ffff:203.0.113.7', null, proxies, '203.0.113.7'],
  ['an IPv6 client behind a trusted IPv6 proxy', '::1', '2001:db8::42', proxies, '2001:db8::42'],
  ['garbage in the header stops at the proxy', '10.0.0.2', 'not-an-ip', proxies, '10.0.0.2'],
  ['every hop trusted: the left-most', '10.0.0.2', '10.0.0.3, 10.0.0.4', proxies, '10.0.0.3'],
];
for (const [name, peer, header, trusted, expected] of cases) {
  address(name, () => assert.is(clientAddress(peer, header, trusted), expected));
}
address.run();

const key = suite('clientKey');
const keys: [string | undefined, string][] = [
  ['203.0.113.7', '203.0.113.7'],
  ['::ffff:203.0.113.7', '203.0.113.7'], // CVE-2026-30827's mistake was to group these as IPv6
  ['::ffff:198.51.100.1', '198.51.100.1'],
  ['2001:db8:1:2:aaaa::1', '2001:db8:1:2::/64'],
  ['2001:db8:1:2:bbbb::2', '2001:db8:1:2::/64'],
  ['2001:db8:1:3::1', '2001:db8:1:3::/64'],
  [undefined, 'unknown'],
];
for (const [input, expected] of keys) key(`${input} -> ${expected}`, () => assert.is(clientKey(input), expected));
key.run();
