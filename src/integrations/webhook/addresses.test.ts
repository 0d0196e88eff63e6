import { test } from 'node:test';
import assert from 'node:assert/strict';
import { embeddedIpv4, forbiddenRange } from './addresses.ts';

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
