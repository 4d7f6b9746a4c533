import { suite } from 'uvu';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { addressAllowList } from '../server/http/addresses.ts';
import { clientAddress, clientKey, forwardedClient, trustedProxies } from '../server/http/client-address.ts';

const invalid = (entry: string) => `invalid:${createHash('sha256').update(entry).digest('hex').slice(0, 16)}`;

const address = suite('clientAddress');
const proxies = trustedProxies(['10.0.0.0/8', '::1']);
const cases: [string, string | undefined, string | null, (a: string) => boolean, string | undefined][] = [
  [
    'no proxy trusted: the peer, whatever the header says',
    '203.0.113.7',
    '198.51.100.1',
    trustedProxies([]),
    '203.0.113.7',
  ],
  ['a forged header from an untrusted peer is ignored', '203.0.113.7', '1.1.1.1, 2.2.2.2', proxies, '203.0.113.7'],
  ['behind one trusted proxy: the right-most entry', '10.0.0.2', '198.51.100.1', proxies, '198.51.100.1'],
  [
    'a client that forges the left-most entry gains nothing',
    '10.0.0.2',
    '1.1.1.1, 198.51.100.1',
    proxies,
    '198.51.100.1',
  ],
  ['two trusted proxies are skipped', '10.0.0.2', '198.51.100.1, 10.0.0.9', proxies, '198.51.100.1'],
  ['IPv4-mapped peers count as IPv4', '::ffff:203.0.113.7', null, proxies, '203.0.113.7'],
  ['an IPv6 client behind a trusted IPv6 proxy', '::1', '2001:db8::42', proxies, '2001:db8::42'],
  ['garbage is a client of its own, never the proxy', '10.0.0.2', 'not-an-ip', proxies, invalid('not-an-ip')],
  [
    'garbage behind a second trusted proxy too',
    '10.0.0.2',
    '198.51.100.1, 0x7f.1, 10.0.0.9',
    proxies,
    invalid('0x7f.1'),
  ],
  ['a port is not part of the client', '10.0.0.2', '198.51.100.1:5678', proxies, '198.51.100.1'],
  [
    'an empty right-most entry is not a licence to read further left',
    '10.0.0.2',
    '198.51.100.1, ',
    proxies,
    invalid(''),
  ],
  ['an empty header: the proxy asked itself', '10.0.0.2', ' ', proxies, '10.0.0.2'],
  ['every hop trusted: the left-most', '10.0.0.2', '10.0.0.3, 10.0.0.4', proxies, '10.0.0.3'],
];
for (const [name, peer, header, trusted, expected] of cases) {
  address(name, () => assert.is(clientAddress(peer, header, trusted), expected));
}
address.run();

const entries = suite('forwardedClient: one X-Forwarded-For entry');
const entryCases: [string, string][] = [
  ['203.0.113.7', '203.0.113.7'],
  ['0.0.0.0', '0.0.0.0'],
  ['255.255.255.255', '255.255.255.255'],
  ['1.2.3.4:5678', '1.2.3.4'],
  ['2001:db8::42', '2001:db8::42'],
  ['2001:DB8:0:0:0:0:0:42', '2001:db8::42'],
  ['[2001:db8::42]', '2001:db8::42'],
  ['[::1]:80', '::1'],
  ['::ffff:198.51.100.7', '198.51.100.7'],
  ['[::ffff:198.51.100.7]:443', '198.51.100.7'],
  // Not addresses: each counts as itself, apart from every address.
  ['garbage', invalid('garbage')],
  ['012.1.2.3', invalid('012.1.2.3')],
  ['1.2.3.04', invalid('1.2.3.04')],
  ['0x7f.0.0.1', invalid('0x7f.0.0.1')],
  ['0x7f000001', invalid('0x7f000001')],
  ['2130706433', invalid('2130706433')],
  ['127.1', invalid('127.1')],
  ['1.2.3', invalid('1.2.3')],
  ['256.1.2.3', invalid('256.1.2.3')],
  ['1.2.3.4.5', invalid('1.2.3.4.5')],
  ['012.1.2.3:80', invalid('012.1.2.3:80')],
  ['1.2.3.4:99999999', invalid('1.2.3.4:99999999')],
  ['::ffff:012.1.2.3', invalid('::ffff:012.1.2.3')],
  ['fe80::1%eth0', invalid('fe80::1%eth0')],
  ['[::1', invalid('[::1')],
  ['unknown', invalid('unknown')],
  ['', invalid('')],
];
for (const [entry, expected] of entryCases)
  entries(`${JSON.stringify(entry)} -> ${expected}`, () => assert.is(forwardedClient(entry), expected));
entries('an invalid entry is its own rate-limit key, and no allow-list holds it', () => {
  const client = forwardedClient('garbage');
  assert.is(clientKey(client), client);
  assert.is.not(clientKey(forwardedClient('other garbage')), client);
  assert.not.ok(trustedProxies(['0.0.0.0/0', '::/0'])(client));
});
entries.run();

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
key('any IPv4 address, as a peer or forwarded, is the one ipaddr.js reads (the dotted-decimal shortcut)', () => {
  const proxy = trustedProxies(['127.0.0.1']);
  fc.assert(
    fc.property(fc.ipV4(), (ip) => {
      const canonical = ipaddr.parse(ip).toString();
      assert.is(canonical, ip);
      assert.is(clientKey(ip), canonical);
      assert.is(clientAddress(ip, null, proxy), canonical);
      assert.is(clientAddress(`::ffff:${ip}`, null, proxy), canonical);
      assert.is(clientAddress('127.0.0.1', ip, proxy), canonical);
      assert.is(forwardedClient(`${ip}:8080`), canonical);
    }),
    { numRuns: 2000 },
  );
});
key.run();

const allowList = suite('addressAllowList');
allowList('an IPv4 address is allowed exactly when ipaddr.js matches it to an entry (the numeric shortcut)', () => {
  const cidr = fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 32 })).map(([ip, bits]) => `${ip}/${bits}`);
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.ipV4(), cidr), { minLength: 1, maxLength: 4 }), fc.ipV4(), (entries, ip) => {
      const expected = entries.some((entry) => {
        const [range, bits] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), 32];
        return ipaddr.parse(ip).match(range, bits);
      });
      assert.is(addressAllowList(entries)(ip), expected);
      assert.is(addressAllowList(entries)(`::ffff:${ip}`), expected, 'IPv4-mapped');
    }),
    { numRuns: 3000 },
  );
  // A range drawn near the address, so that matches are common too.
  assert.ok(addressAllowList(['203.0.113.0/25'])('203.0.113.127'));
  assert.not.ok(addressAllowList(['203.0.113.0/25'])('203.0.113.128'));
  assert.ok(addressAllowList(['0.0.0.0/0'])('255.255.255.255'));
  assert.not.ok(addressAllowList(['10.0.0.0/8'])('::1'));
});
allowList.run();
