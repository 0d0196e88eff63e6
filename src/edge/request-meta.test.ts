import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildResponseMeta, clientAddress } from './request-meta.ts';

const IPHONE_SAFARI =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const IPAD_SAFARI =
  'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1';
const WINDOWS_CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const SMART_TV =
  'Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36';

function meta(overrides: Partial<Parameters<typeof buildResponseMeta>[0]> = {}) {
  return buildResponseMeta({
    headers: {},
    remoteAddress: '203.0.113.9',
    captureIp: false,
    trustedProxyHops: 0,
    ...overrides,
  });
}

test('only source, url and action come from the client, and absent ones are left out', () => {
  const client = { source: 'app', url: 'https://shop.example/checkout', action: 'clicked buy' };
  const built = meta({ client: { ...client, country: 'FR', ipAddress: '1.1.1.1' } as typeof client });
  assert.deepEqual(built, { ...client, userAgent: { device: 'desktop' } });
  assert.deepEqual(meta({ client: { url: 'https://shop.example' } }), {
    url: 'https://shop.example',
    userAgent: { device: 'desktop' },
  });
  assert.deepEqual(meta(), { userAgent: { device: 'desktop' } });
});

test('an iPhone Safari user agent is a mobile iOS Mobile Safari', () => {
  assert.deepEqual(meta({ headers: { 'user-agent': IPHONE_SAFARI } }).userAgent, {
    browser: 'Mobile Safari',
    os: 'iOS',
    device: 'mobile',
  });
});

test('an iPad user agent is a tablet', () => {
  assert.equal(meta({ headers: { 'user-agent': IPAD_SAFARI } }).userAgent.device, 'tablet');
});

test('Chrome on Windows is a desktop', () => {
  assert.deepEqual(meta({ headers: { 'user-agent': WINDOWS_CHROME } }).userAgent, {
    browser: 'Chrome',
    os: 'Windows',
    device: 'desktop',
  });
});

test('a device type other than mobile or tablet passes through as the parser gives it', () => {
  assert.equal(meta({ headers: { 'user-agent': SMART_TV } }).userAgent.device, 'smarttv');
});

test('a missing or unrecognisable user agent is a desktop with no browser or OS', () => {
  assert.deepEqual(meta().userAgent, { device: 'desktop' });
  assert.deepEqual(meta({ headers: { 'user-agent': 'curl/8.5.0' } }).userAgent, { device: 'desktop' });
});

test('the country comes from CF-IPCountry before X-Vercel-IP-Country before CloudFront-Viewer-Country', () => {
  const all = { 'cf-ipcountry': 'de', 'x-vercel-ip-country': 'FR', 'cloudfront-viewer-country': 'US' };
  assert.equal(meta({ headers: all }).country, 'DE');
  assert.equal(meta({ headers: { ...all, 'cf-ipcountry': '' } }).country, 'FR');
  assert.equal(
    meta({ headers: { 'x-vercel-ip-country': ' fr ', 'cloudfront-viewer-country': 'US' } }).country,
    'FR',
  );
  assert.equal(
    meta({ headers: { 'x-vercel-ip-country': '  ', 'cloudfront-viewer-country': 'us' } }).country,
    'US',
  );
  assert.equal('country' in meta(), false);
});

test('with IP capture off the meta has no ipAddress', () => {
  const built = meta({
    captureIp: false,
    headers: { 'x-forwarded-for': '198.51.100.1' },
    trustedProxyHops: 1,
  });
  assert.equal('ipAddress' in built, false);
});

test('with IP capture on the client address honours the trusted proxy hops', () => {
  const headers = { 'x-forwarded-for': '198.51.100.1, 10.0.0.2' };
  assert.equal(
    meta({ captureIp: true, headers, remoteAddress: '10.0.0.3', trustedProxyHops: 2 }).ipAddress,
    '198.51.100.1',
  );
  assert.equal(meta({ captureIp: true, headers, remoteAddress: '::ffff:10.0.0.3' }).ipAddress, '10.0.0.3');
});

test('with no trusted proxy hops the socket address is the client, whatever X-Forwarded-For says', () => {
  assert.equal(clientAddress('203.0.113.9', '198.51.100.1', 0), '203.0.113.9');
  assert.equal(clientAddress('203.0.113.9', undefined, 0), '203.0.113.9');
});

test('with one trusted proxy hop the rightmost X-Forwarded-For entry is the client', () => {
  assert.equal(clientAddress('10.0.0.1', 'spoofed, 198.51.100.7', 1), '198.51.100.7');
  assert.equal(clientAddress('10.0.0.1', '198.51.100.7', 1), '198.51.100.7');
});

test('with two trusted proxy hops the entry two from the right end of the chain is the client', () => {
  assert.equal(clientAddress('10.0.0.1', 'spoofed, 198.51.100.7, 10.0.0.2', 2), '198.51.100.7');
  assert.equal(
    clientAddress('10.0.0.1', ' 198.51.100.7 ,, 10.0.0.2 ', 2),
    '198.51.100.7',
    'entries are trimmed, empty ones dropped',
  );
});

test('more trusted hops than the chain is long gives the leftmost entry', () => {
  assert.equal(clientAddress('10.0.0.1', '198.51.100.7', 5), '198.51.100.7');
  assert.equal(clientAddress('10.0.0.1', undefined, 2), '10.0.0.1');
  assert.equal(clientAddress('10.0.0.1', '', 2), '10.0.0.1');
});

test('IPv4-mapped IPv6 addresses become dotted IPv4, in short and long text forms', () => {
  assert.equal(clientAddress('::ffff:192.0.2.33', undefined, 0), '192.0.2.33');
  assert.equal(clientAddress('::FFFF:c000:0221', undefined, 0), '192.0.2.33');
  assert.equal(clientAddress('0000:0000:0000:0000:0000:ffff:7f00:0001', undefined, 0), '127.0.0.1');
  assert.equal(clientAddress('10.0.0.1', '::ffff:198.51.100.7', 1), '198.51.100.7');
});

test('other IPv6 addresses keep their meaning in canonical compressed form', () => {
  assert.equal(clientAddress('0000:0000:0000:0000:0000:0000:0000:0001', undefined, 0), '::1');
  assert.equal(clientAddress('2001:0DB8:0000:0000:0000:0000:0000:0042', undefined, 0), '2001:db8::42');
  assert.equal(clientAddress('fe80::1%eth0', undefined, 0), 'fe80::1%eth0');
});
