// The server-side `meta` of a response (compat notes, "Rules"): the client may only send `source`,
// `url` and `action`; the user agent, country and (when the survey captures it) the IP address
// come from the request. This module is the only place that imports ua-parser-js.
import { isIPv6 } from 'node:net';
import UAParser from 'ua-parser-js';

export interface ResponseMeta {
  source?: string;
  url?: string;
  action?: string;
  userAgent: {
    browser?: string;
    os?: string;
    /**
     * `desktop`, `mobile` or `tablet`; other parser types (`smarttv`, `console`, `wearable`, …)
     * pass through. Typed `string` because `'desktop' | … | string` collapses to it anyway.
     */
    device: string;
  };
  country?: string;
  ipAddress?: string;
}

/** Country headers set by hosting providers, in order of precedence. */
const COUNTRY_HEADERS = ['cf-ipcountry', 'x-vercel-ip-country', 'cloudfront-viewer-country'] as const;

export function buildResponseMeta(input: {
  client?: { source?: string; url?: string; action?: string };
  /** Lower-case header names. */
  headers: Readonly<Record<string, string>>;
  remoteAddress: string;
  captureIp: boolean;
  trustedProxyHops: number;
}): ResponseMeta {
  const { client = {}, headers } = input;
  const country = COUNTRY_HEADERS.map((name) => headers[name]?.trim() ?? '').find((value) => value !== '');
  return withoutUndefined({
    source: client.source,
    url: client.url,
    action: client.action,
    userAgent: parseUserAgent(headers['user-agent'] ?? ''),
    country: country?.toUpperCase(),
    ipAddress: input.captureIp
      ? clientAddress(input.remoteAddress, headers['x-forwarded-for'], input.trustedProxyHops)
      : undefined,
  });
}

/**
 * Parsed user agents: a few hundred strings make most of the traffic, and parsing one takes a few
 * dozen regular expressions. Bounded (the header is the client's to choose): the oldest entry goes
 * first, and very long strings are parsed every time.
 */
const parsedAgents = new Map<string, ResponseMeta['userAgent']>();
const MAX_PARSED_AGENTS = 2_000;
const MAX_CACHED_AGENT_LENGTH = 512;

function parseUserAgent(header: string): ResponseMeta['userAgent'] {
  const cached = parsedAgents.get(header);
  if (cached) return { ...cached };
  const { browser, os, device } = new UAParser(header).getResult();
  // The parser names no type for desktops; other types (smarttv, console, …) pass through as given.
  const parsed = withoutUndefined({ browser: browser.name, os: os.name, device: device.type ?? 'desktop' });
  if (header.length <= MAX_CACHED_AGENT_LENGTH) {
    if (parsedAgents.size >= MAX_PARSED_AGENTS) parsedAgents.delete(parsedAgents.keys().next().value!);
    parsedAgents.set(header, parsed);
  }
  return { ...parsed };
}

/**
 * The client's address. The chain is the X-Forwarded-For entries followed by the socket address;
 * each of our `trustedProxyHops` proxies appended the address it received from, so the client is
 * the entry that many places from the right end (0 → the socket address). Entries further left
 * were written by the client itself and are not trusted; with fewer entries than hops, the
 * leftmost entry is the best there is.
 */
export function clientAddress(
  remoteAddress: string,
  forwardedFor: string | undefined,
  trustedProxyHops: number,
): string {
  const forwarded = (forwardedFor ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const chain = [...forwarded, remoteAddress];
  const hops = Number.isInteger(trustedProxyHops) && trustedProxyHops > 0 ? trustedProxyHops : 0;
  return normaliseAddress(chain[Math.max(0, chain.length - 1 - hops)] ?? remoteAddress);
}

const IPV4_MAPPED = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/**
 * uWS reports IPv4 peers as IPv4-mapped IPv6, sometimes in full form
 * (`0000:0000:0000:0000:0000:ffff:7f00:0001`): those become dotted IPv4. Other IPv6 addresses get
 * their canonical compressed form (the WHATWG URL serialisation follows RFC 5952).
 */
function normaliseAddress(address: string): string {
  const asHost = `http://[${address}]/`;
  // A zone id (`fe80::1%eth0`) is valid IPv6 text but not a URL host: such addresses stay as given.
  if (!isIPv6(address) || !URL.canParse(asHost)) return address;
  const canonical = new URL(asHost).hostname.slice(1, -1);
  const mapped = IPV4_MAPPED.exec(canonical);
  if (!mapped) return canonical;
  const [high, low] = [parseInt(mapped[1] ?? '0', 16), parseInt(mapped[2] ?? '0', 16)];
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The object without its undefined properties, so that absent fields are absent in the JSON too. */
function withoutUndefined<T extends object>(value: T): T {
  const defined: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (v !== undefined) defined[key] = v;
  return defined as T;
}

/**
 * The device a segment's device filter compares with (docs/segments.md): `phone` when the parser
 * names a device type (mobile, tablet, wearable …), `desktop` otherwise. Formbricks means the
 * same, but tests the parser's `device` object itself, which is always there (spec §2.7).
 */
export function deviceTypeOf(userAgent: string | undefined): 'phone' | 'desktop' {
  return parseUserAgent(userAgent ?? '').device === 'desktop' ? 'desktop' : 'phone';
}
