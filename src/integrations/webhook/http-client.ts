// The only code that calls webhook receivers: node:http and node:https, nothing pooled, nothing
// followed. A URL is resolved once per attempt, every address it resolves to is checked
// (addresses.ts), and the request connects to the address that was checked, never to a second
// resolution of the name (DNS rebinding: a name that answers a public address to the check and
// 127.0.0.1 to the connection). Receivers' answers become ProviderFailures here, as for Slack and
// Notion: the deliverer alone decides what they do to a delivery.
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { ProviderError, type ProviderFailure } from '../failure.ts';
import { refusedRange, type AddressPolicy } from './addresses.ts';

/** A URL that can never be sent to: refused at creation (400) and, at send time, a permanent failure. */
export class UrlRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'UrlRefused';
  }
}

export interface WebhookTarget {
  url: URL;
  /** The checked address the request connects to. */
  address: string;
  family: 4 | 6;
}

/** Where webhooks may go besides the public internet (addresses.ts), and how long an attempt takes. */
export interface HttpLimits extends AddressPolicy {
  /** The whole attempt, from the resolution to the last byte read. */
  timeoutMs: number;
}

/** Reads at most this much of a receiver's answer (it only goes into `lastError`). */
export const MAX_ANSWER_BYTES = 16 * 1024;
const ERROR_SNIPPET = 200;

/** The URL's scheme, as a problem to report, or undefined when it is http(s). */
export function schemeProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry a user name or password';
  return undefined;
}

/**
 * Where a request for `raw` may go: its URL and a checked address. UrlRefused for a URL that no
 * retry can fix (scheme, a forbidden address); a name that does not resolve throws the DNS error,
 * which may be temporary.
 */
export async function resolveTarget(raw: string, limits: HttpLimits): Promise<WebhookTarget> {
  const problem = schemeProblem(raw);
  if (problem) throw new UrlRefused(`The URL ${problem}`);
  const url = new URL(raw);
  // Bounded: a resolver that does not answer must not hold a creation (or a worker) for long.
  const addresses = await Promise.race([
    dnsLookup(hostOf(url), { all: true }),
    expiry(AbortSignal.timeout(limits.timeoutMs)),
  ]);
  // Every address, not just the first: a name may list a public and a private one.
  for (const { address } of addresses) {
    const range = refusedRange(address, limits);
    if (range)
      throw new UrlRefused(
        `${url.hostname} resolves to ${address}, a ${range} address; this server sends webhooks only to public addresses${limits.allowPrivateAddresses || limits.allowedNetworks.length > 0 ? ' and the networks its operator allows' : ''}`,
      );
  }
  const first = addresses[0];
  if (!first) throw new UrlRefused(`${url.hostname} has no address`);
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** POSTs `body` once; resolves to the receiver's status (2xx), or throws a ProviderError. */
export async function postOnce(
  raw: string,
  body: string,
  headers: Readonly<Record<string, string>>,
  limits: HttpLimits,
): Promise<number> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const timedOut = () =>
    new ProviderError({ kind: 'retry', reason: `no answer within ${limits.timeoutMs} ms` });
  let target: WebhookTarget;
  try {
    target = await Promise.race([resolveTarget(raw, limits), expiry(deadline)]);
  } catch (error) {
    if (error instanceof UrlRefused) throw new ProviderError({ kind: 'permanent', reason: error.message });
    if (deadline.aborted) throw timedOut();
    throw new ProviderError({ kind: 'retry', reason: `could not resolve the host: ${messageOf(error)}` });
  }
  const answer = await send(target, body, headers, deadline).catch((error: unknown) => {
    if (deadline.aborted) throw timedOut();
    throw new ProviderError({ kind: 'retry', reason: `could not reach the receiver: ${messageOf(error)}` });
  });
  if (answer.status >= 200 && answer.status < 300) return answer.status;
  throw new ProviderError(failureOfAnswer(answer));
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The first MAX_ANSWER_BYTES of the body. */
  text: string;
}

/**
 * What a receiver's answer other than 2xx means. 429, 408 and 5xx: try again (after `Retry-After`
 * when it says). A redirect is not followed (it could lead anywhere, a private address included,
 * and a moved endpoint does not come back by itself): permanent, like any other 4xx. Fix the URL,
 * then replay.
 */
export function failureOfAnswer(answer: Answer): ProviderFailure {
  const { status } = answer;
  const said = answer.text.trim().slice(0, ERROR_SNIPPET);
  const reason = `the receiver answered ${status}${said ? `: ${said}` : ''}`;
  if (status === 429 || status === 408 || status >= 500)
    return { kind: 'retry', reason, retryAfterMs: retryAfterMs(answer.headers['retry-after']) };
  if (status >= 300 && status < 400)
    return {
      kind: 'permanent',
      reason: `the receiver redirected (${status} to ${answer.headers.location ?? 'nowhere'}); redirects are not followed`,
    };
  return { kind: 'permanent', reason };
}

/** `Retry-After` as seconds or as an HTTP date, in milliseconds from now. */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function send(
  target: WebhookTarget,
  body: string,
  headers: Readonly<Record<string, string>>,
  signal: AbortSignal,
): Promise<Answer> {
  const { url } = target;
  // The checked address, whatever the name resolves to now (also when Node asks for all of them).
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(
      {
        method: 'POST',
        protocol: url.protocol,
        hostname: hostOf(url),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'Chorus-Webhooks',
        },
        lookup,
        agent: false,
        signal,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8').slice(0, MAX_ANSWER_BYTES),
          });
          response.destroy();
        };
        response.on('data', (chunk: Buffer) => {
          if (size < MAX_ANSWER_BYTES) chunks.push(chunk);
          size += chunk.length;
          // Enough read: the rest of a large answer is not waited for.
          if (size >= MAX_ANSWER_BYTES) done();
        });
        response.on('end', done);
        response.on('error', reject);
        // Closed before its end (the receiver hung up mid-body): the status it sent still counts.
        response.on('close', done);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** The host to resolve and connect to: an IPv6 literal without its brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Rejects when the attempt's time is up (a slow resolver counts against it too). */
function expiry(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(new Error('no answer in time')), { once: true }),
  );
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} ${error.message}` : error.message;
  }
  return String(error);
}
