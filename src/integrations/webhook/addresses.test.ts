import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseNetworks, type Network } from '../../config.ts';
import { embeddedIpv4, forbiddenRange, refusedRange } from './addresses.ts';

test('public addresses are allowed, IPv4 and IPv6', () => {
  for (const address of [
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
  ])
    assert.equal(forbiddenRange(address), undefined, address);
});

test('private, loopback, link-local, unspecified and multicast addresses are refused by name', () => {
  const cases: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
  ];
  for (const [address, range] of cases) assert.equal(forbiddenRange(address), range, address);
});

test('the edges of the private ranges are exact', () => {
  assert.equal(forbiddenRange('172.15.255.255'), undefined);
  assert.equal(forbiddenRange('172.32.0.0'), undefined);
  assert.equal(forbiddenRange('100.128.0.0'), undefined);
  assert.equal(forbiddenRange('11.0.0.0'), undefined);
});

test('an IPv4 address wrapped in IPv6 (mapped, NAT64, compatible) is judged as the IPv4 address', () => {
  assert.equal(embeddedIpv4('::ffff:127.0.0.1'), '127.0.0.1');
  assert.equal(embeddedIpv4('::ffff:7f00:1'), '127.0.0.1');
  assert.equal(embeddedIpv4('64:ff9b::a9fe:a9fe'), '169.254.169.254');
  assert.equal(embeddedIpv4('::10.0.0.1'), '10.0.0.1');
  assert.equal(embeddedIpv4('::1'), undefined);
  assert.equal(embeddedIpv4('2606:4700::1'), undefined);
  assert.equal(forbiddenRange('::ffff:127.0.0.1'), 'loopback');
  assert.equal(forbiddenRange('::ffff:192.168.0.10'), 'private');
  assert.equal(forbiddenRange('64:ff9b::a9fe:a9fe'), 'link-local');
  assert.equal(forbiddenRange('::ffff:8.8.8.8'), undefined);
});

test('what is not an IP address is refused', () => {
  assert.equal(forbiddenRange('localhost'), 'invalid');
  assert.equal(forbiddenRange(''), 'invalid');
});

const networks = (text: string) => parseNetworks(text) as Network[];

test('an allowed network lets exactly its addresses through, IPv4 and IPv6, written plain or wrapped', () => {
  const policy = {
    allowPrivateAddresses: false,
    allowedNetworks: networks('10.20.0.0/16, 127.0.0.1, fd12:3456::/32'),
  };
  for (const address of ['10.20.0.1', '10.20.255.255', '127.0.0.1', '::ffff:127.0.0.1', 'fd12:3456::9'])
    assert.equal(refusedRange(address, policy), undefined, address);
  for (const [address, range] of [
    ['10.21.0.1', 'private'],
    ['127.0.0.2', 'loopback'],
    ['192.168.1.1', 'private'],
    ['fd12:3457::1', 'private'],
  ])
    assert.equal(refusedRange(address!, policy), range, address);
  assert.equal(refusedRange('8.8.8.8', policy), undefined, 'public addresses stay allowed');
});

test('link-local and cloud metadata addresses are refused whatever the operator allows', () => {
  const everything = {
    allowPrivateAddresses: true,
    allowedNetworks: networks('169.254.0.0/16, fd00:ec2::/32, 100.100.100.200, 168.63.129.16, fe80::/10'),
  };
  for (const [address, range] of [
    ['169.254.169.254', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['169.254.170.2', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['100.100.100.200', 'cloud metadata'],
    ['168.63.129.16', 'cloud metadata'],
  ])
    assert.equal(refusedRange(address!, everything), range, address);
  assert.equal(refusedRange('10.0.0.1', everything), undefined);
});

test('WEBHOOK_ALLOWED_NETWORKS is read as addresses and CIDR networks, and anything else is named', () => {
  assert.deepEqual(parseNetworks(' 10.0.0.0/8 ,192.168.5.7,fd12::/48,'), [
    { address: '10.0.0.0', prefix: 8, family: 'ipv4' },
    { address: '192.168.5.7', prefix: 32, family: 'ipv4' },
    { address: 'fd12::', prefix: 48, family: 'ipv6' },
  ]);
  assert.deepEqual(parseNetworks(''), []);
  for (const bad of ['10.0.0.0/33', 'fd12::/129', 'intranet', '10.0.0.0/8/1', '10.0.0.0/', '10.0.0.0/x'])
    assert.match(parseNetworks(bad) as string, /is not a network/, bad);
});
