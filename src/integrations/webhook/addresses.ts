// Which IP addresses a webhook may be sent to. A webhook URL is chosen by whoever holds an API key,
// so without this check Chorus would POST for them into its own network: the metadata service of a
// cloud VM (169.254.169.254), a database on localhost, a router on 192.168.x.x. Addresses outside
// the public internet are refused unless the operator allows them: networks named one by one
// (WEBHOOK_ALLOWED_NETWORKS), or all of them (WEBHOOK_ALLOW_PRIVATE_ADDRESSES). Link-local and the
// clouds' metadata addresses are refused whatever is allowed: nothing a webhook should reach lives
// there, and what does (instance credentials) is what an attacker wants.
// Pure: no I/O, the resolution happens in http-client.ts.
import { BlockList, isIP } from 'node:net';
import type { Network } from '../../config.ts';

/** What the operator lets webhooks reach besides the public internet. */
export interface AddressPolicy {
  /** Every non-public range (WEBHOOK_ALLOW_PRIVATE_ADDRESSES). */
  allowPrivateAddresses: boolean;
  /** These networks (WEBHOOK_ALLOWED_NETWORKS). */
  allowedNetworks: readonly Network[];
}

/** A range of addresses, by the name a refusal gives. */
interface Range {
  name: string;
  family: 'ipv4' | 'ipv6';
  net: string;
  prefix: number;
}

/** Never reachable, whatever the policy allows. */
const NEVER: readonly Range[] = [
  { name: 'link-local', family: 'ipv4', net: '169.254.0.0', prefix: 16 }, // AWS, GCP, Azure, OCI metadata: .169.254
  { name: 'link-local', family: 'ipv6', net: 'fe80::', prefix: 10 },
  { name: 'cloud metadata', family: 'ipv6', net: 'fd00:ec2::', prefix: 32 }, // AWS IMDS and pod identity over IPv6
  { name: 'cloud metadata', family: 'ipv4', net: '100.100.100.200', prefix: 32 }, // Alibaba Cloud
  { name: 'cloud metadata', family: 'ipv4', net: '168.63.129.16', prefix: 32 }, // Azure's host (WireServer)
];

/** The other ranges outside the public internet (RFC 6890's special-purpose registries). */
const RANGES: readonly Range[] = [
  { name: 'unspecified', family: 'ipv4', net: '0.0.0.0', prefix: 8 },
  { name: 'private', family: 'ipv4', net: '10.0.0.0', prefix: 8 },
  { name: 'private', family: 'ipv4', net: '100.64.0.0', prefix: 10 }, // carrier-grade NAT
  { name: 'loopback', family: 'ipv4', net: '127.0.0.0', prefix: 8 },
  { name: 'private', family: 'ipv4', net: '172.16.0.0', prefix: 12 },
  { name: 'reserved', family: 'ipv4', net: '192.0.0.0', prefix: 24 },
  { name: 'documentation', family: 'ipv4', net: '192.0.2.0', prefix: 24 },
  { name: 'private', family: 'ipv4', net: '192.168.0.0', prefix: 16 },
  { name: 'reserved', family: 'ipv4', net: '198.18.0.0', prefix: 15 }, // benchmarking
  { name: 'documentation', family: 'ipv4', net: '198.51.100.0', prefix: 24 },
  { name: 'documentation', family: 'ipv4', net: '203.0.113.0', prefix: 24 },
  { name: 'multicast', family: 'ipv4', net: '224.0.0.0', prefix: 4 },
  { name: 'reserved', family: 'ipv4', net: '240.0.0.0', prefix: 4 }, // and the broadcast address
  { name: 'unspecified', family: 'ipv6', net: '::', prefix: 128 },
  { name: 'loopback', family: 'ipv6', net: '::1', prefix: 128 },
  { name: 'private', family: 'ipv6', net: 'fc00::', prefix: 7 }, // unique local
  { name: 'private', family: 'ipv6', net: 'fec0::', prefix: 10 }, // site-local, deprecated
  { name: 'multicast', family: 'ipv6', net: 'ff00::', prefix: 8 },
  { name: 'documentation', family: 'ipv6', net: '2001:db8::', prefix: 32 },
];

function byName(ranges: readonly Range[]): Map<string, BlockList> {
  const lists = new Map<string, BlockList>();
  for (const range of ranges) {
    let list = lists.get(range.name);
    if (!list) lists.set(range.name, (list = new BlockList()));
    list.addSubnet(range.net, range.prefix, range.family);
  }
  return lists;
}
const never = byName(NEVER);
const nonPublic = byName(RANGES);

/**
 * IPv6 forms that carry an IPv4 address (`::ffff:127.0.0.1`, NAT64's `64:ff9b::7f00:1`, the old
 * `::127.0.0.1`): the IPv4 address they reach, so that wrapping one does not pass the check.
 */
export function embeddedIpv4(address: string): string | undefined {
  if (isIP(address) !== 6) return undefined;
  const groups = expandIpv6(address);
  const high = groups.slice(0, 6);
  const zeros = (gs: number[]) => gs.every((g) => g === 0);
  const mapped = zeros(high.slice(0, 5)) && high[5] === 0xffff;
  const compatible = zeros(high) && (groups[6] ?? 0) !== 0; // `::` and `::1` are IPv6's own
  const nat64 = high[0] === 0x64 && high[1] === 0xff9b && zeros(high.slice(2));
  if (!mapped && !compatible && !nat64) return undefined;
  const [a = 0, b = 0] = groups.slice(6);
  return [a >> 8, a & 0xff, b >> 8, b & 0xff].join('.');
}

/** The eight 16-bit groups of an IPv6 address (valid, as isIP said), a dotted IPv4 tail included. */
function expandIpv6(address: string): number[] {
  let text = address.split('%')[0]!.toLowerCase();
  const v4 = text.match(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/);
  if (v4) {
    const [, a, b, c, d] = v4.map(Number) as [number, number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const part = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * Why an address is refused (`loopback`, `private`, `link-local`, `cloud metadata`, …), or undefined
 * when `policy` lets a webhook go there. Something that is not an IP address is refused as `invalid`.
 */
export function refusedRange(address: string, policy: AddressPolicy): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'invalid';
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined) return refusedRange(v4, policy);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const bare = address.split('%')[0]!;
  const inRange = (lists: Map<string, BlockList>) =>
    [...lists].find(([, list]) => list.check(bare, type))?.[0];
  const always = inRange(never);
  if (always) return always;
  const range = inRange(nonPublic);
  if (range === undefined || policy.allowPrivateAddresses) return undefined;
  return allowedList(policy.allowedNetworks).check(bare, type) ? undefined : range;
}

/** Why an address is refused to a policy that allows only the public internet (see refusedRange). */
export function forbiddenRange(address: string): string | undefined {
  return refusedRange(address, PUBLIC_ONLY);
}

const PUBLIC_ONLY: AddressPolicy = { allowPrivateAddresses: false, allowedNetworks: [] };

const allowedLists = new WeakMap<readonly Network[], BlockList>();
function allowedList(networks: readonly Network[]): BlockList {
  let list = allowedLists.get(networks);
  if (!list) {
    list = new BlockList();
    for (const n of networks) list.addSubnet(n.address, n.prefix, n.family);
    allowedLists.set(networks, list);
  }
  return list;
}
