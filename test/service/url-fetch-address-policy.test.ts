// Which addresses an import may connect to: public unicast only, plus loopback with allowPrivate.
import { describe, expect, it } from 'vitest';
import { checkAddress, classifyAddress } from '../../src/service/url-fetch/address-policy.js';

describe('public unicast addresses are allowed', () => {
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1', // just past 172.16.0.0/12
    '100.128.0.1', // just past 100.64.0.0/10
    '198.20.0.1', // just past 198.18.0.0/15
    '223.255.255.254', // just below multicast
    '2606:4700:4700::1111',
    '2a00:1450:4001:81b::200e',
    '::ffff:8.8.8.8', // IPv4-mapped public
    '64:ff9b::808:808', // NAT64 of 8.8.8.8
    '2002:808:808::1', // 6to4 of 8.8.8.8
  ])('%s', (address) => {
    expect(checkAddress(address, false)).toMatchObject({ allowed: true, kind: 'public' });
    expect(checkAddress(address, true)).toMatchObject({ allowed: true, kind: 'public' });
  });
});

describe('loopback: refused, allowed with allowPrivate', () => {
  it.each(['127.0.0.1', '127.255.255.254', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:1'])(
    '%s',
    (address) => {
      const refused = checkAddress(address, false);
      expect(refused).toMatchObject({ allowed: false, kind: 'loopback' });
      expect(refused.allowed === false && refused.reason).toMatch(/loopback.*--allow-private-urls/);
      expect(checkAddress(address, true)).toMatchObject({ allowed: true, kind: 'loopback' });
    },
  );
});

describe("every other non-public address is refused, even with allowPrivate (kinds: ipaddr.js's range names)", () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.255', 'carrierGradeNat'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['2001::1', 'teredo'],
    ['100::1', 'discard'],
    ['::127.0.0.1', 'reserved'], // deprecated IPv4-compatible form is not loopback
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a9fe:a9fe', 'linkLocal'],
    ['64:ff9b::a9fe:a9fe', 'embedded-non-public'],
    ['64:ff9b::7f00:1', 'embedded-non-public'], // NAT64 of loopback goes to a gateway, not to us
    ['64:ff9b:1::1', 'rfc6052'],
    ['2002:a9fe:a9fe::1', 'embedded-non-public'],
    ['2002:7f00:1::1', 'embedded-non-public'],
    ['not-an-ip', 'invalid'],
    ['', 'invalid'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address).kind).toBe(kind);
    expect(checkAddress(address, false).allowed).toBe(false);
    expect(checkAddress(address, true).allowed).toBe(false);
  });

  it('names the IPv4 address inside an embedding form', () => {
    const verdict = checkAddress('64:ff9b::a9fe:a9fe', true);
    expect(verdict.allowed === false && verdict.reason).toBe(
      '64:ff9b::a9fe:a9fe is the NAT64 form of 169.254.169.254, a link-local address, where cloud metadata services live (169.254.0.0/16)',
    );
  });
});
