// The HTTP and OAuth plumbing shared by the local provider fakes (fake-slack.ts, fake-notion.ts).
// Only what both fakes do identically lives here; each provider's wire format (error shapes, status
// codes, routes) stays in its own fake, because matching that format is the point of a fake.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The whole request body as UTF-8; the fakes parse it themselves (form, JSON, or nothing). */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Answers with a JSON body, or text/plain when `body` is a string (Slack's bare 404/500 pages).
 * content-length is set so clients see a complete response rather than a chunked one.
 */
export function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type':
      typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** The token of an `Authorization: Bearer …` header, or undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  return header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
}

/** The client id and secret of an `Authorization: Basic …` header (OAuth client authentication). */
export function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  if (!header?.startsWith('Basic ')) return undefined;
  const [id = '', ...rest] = Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8').split(':');
  // The secret may itself contain ':'; only the first one separates id from secret.
  return { id, secret: rest.join(':') };
}

interface QueuedFailure<How> {
  how: How;
  retryAfterSeconds: number;
  /** Which requests this failure hits; undefined = any request. */
  appliesTo: ((key: string) => boolean) | undefined;
  left: number;
}

/**
 * Failures injected by a test with failNext, taken in the order they were queued so that
 * failNext(1, a); failNext(1, b) fails the next two requests as a then b. Each entry can be
 * limited to some requests (a Slack method, a Notion path prefix) via `appliesTo`.
 */
export class FailureQueue<How> {
  readonly #queue: QueuedFailure<How>[] = [];

  add(
    count: number,
    how: How,
    retryAfterSeconds: number,
    appliesTo: ((key: string) => boolean) | undefined,
  ): void {
    if (count > 0) this.#queue.push({ how, retryAfterSeconds, appliesTo, left: count });
  }

  /** The failure for the request identified by `key`, using up one of its count; undefined = none. */
  take(key: string): { how: How; retryAfterSeconds: number } | undefined {
    const failure = this.#queue.find((f) => f.appliesTo === undefined || f.appliesTo(key));
    if (!failure) return undefined;
    failure.left -= 1;
    if (failure.left <= 0) this.#queue.splice(this.#queue.indexOf(failure), 1);
    return failure;
  }
}

/**
 * One-time OAuth authorization codes. A code issued with a redirect URI only redeems with that same
 * URI, as real providers insist; a code issued without one accepts any (but a URI must be sent).
 */
export class OAuthCodes {
  readonly #codes = new Map<string, { redirectUri: string | undefined }>();

  constructor(private readonly prefix: string) {}

  issue(redirectUri?: string): string {
    const code = `${this.prefix}${randomBytes(8).toString('hex')}`;
    this.#codes.set(code, { redirectUri });
    return code;
  }

  /**
   * Uses up `code` when it is valid for `redirectUri`; otherwise says why not (the code is kept,
   * so a test can retry with the right URI). Each fake maps the reason to its provider's error.
   */
  redeem(
    code: string | undefined,
    redirectUri: string | undefined,
  ): 'ok' | 'unknown_code' | 'bad_redirect_uri' {
    const issued = code === undefined ? undefined : this.#codes.get(code);
    if (code === undefined || !issued) return 'unknown_code';
    if (!redirectUri || (issued.redirectUri !== undefined && issued.redirectUri !== redirectUri)) {
      return 'bad_redirect_uri';
    }
    this.#codes.delete(code);
    return 'ok';
  }
}

/**
 * The provider's single access token. revoke() makes it stop working (to test reconnect flows);
 * the next successful code exchange then issues a fresh one, like reinstalling the app.
 */
export class RevocableToken {
  #token: string;
  #revoked = false;

  constructor(private readonly newToken: () => string) {
    this.#token = newToken();
  }

  get current(): string {
    return this.#token;
  }

  accepts(given: string): boolean {
    return given === this.#token && !this.#revoked;
  }

  revoke(): void {
    this.#revoked = true;
  }

  /** Called on each successful code exchange: the token to hand out. */
  grant(): string {
    if (this.#revoked) {
      this.#token = this.newToken();
      this.#revoked = false;
    }
    return this.#token;
  }
}

export interface FakeServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly base: string;
  close(): Promise<void>;
}

/**
 * Serves `handle` on an ephemeral port of 127.0.0.1 (so parallel tests never collide). When the
 * handler throws, `onCrash` answers in the provider's error format; if headers already went out,
 * the connection is dropped instead, since there is no way to report the error any more.
 */
export async function startFakeServer(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  onCrash: (res: ServerResponse, error: unknown) => void,
): Promise<FakeServer> {
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) onCrash(res, error);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets from the SDK clients would otherwise hold close() open.
        server.closeAllConnections();
      });
    },
  };
}
