// The edge over node:http, for a Node or C library no uWebSockets.js build loads on (server.ts
// decides). Slower than uWS, but it answers as the uWS adapter does: the same handler and error
// replies, the body capped at MAX_BODY_BYTES (413, by Content-Length or while streaming, then the
// rest read and dropped), the same percent-encoding and Transfer-Encoding refusals, a connection
// closed after 10 s without data, and an answer always, even when the handler throws. Node's own
// parser is stricter than uWS's in places and laxer in others: what it refuses (a malformed
// Content-Length, a chunk size that is not hex, …) is answered 400 in the error shape and the
// connection closed, where uWS closes it unanswered ("HTTP/1.1 at the edge" in docs/api.md).
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { invalidInput } from '../../errors.ts';
import {
  BAD_PERCENT_ENCODING_PROBLEM,
  DISCARD_LIMIT_BYTES,
  DISCARD_MS,
  hasBadPercentEncoding,
} from './request-rules.ts';
import {
  MAX_BODY_BYTES,
  type HttpReply,
  type HttpRequest,
  StreamedBody,
  type HttpServer,
  type ServerOptions,
} from './types.ts';
import { InFlight } from './in-flight.ts';

/** uWS closes a connection that sends nothing for 10 s (while a head or body is due, or idle). */
const IDLE_MS = 10_000;

/** The parser's refusals, by llhttp code, and the header the details name. */
const REFUSED_FIELDS: Readonly<Record<string, string>> = {
  HPE_INVALID_CONTENT_LENGTH: 'content-length',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'content-length',
  HPE_INVALID_TRANSFER_ENCODING: 'transfer-encoding',
  HPE_HEADER_OVERFLOW: 'headers',
};

export function listenWithNode(options: ServerOptions): Promise<HttpServer> {
  /**
   * Connections answered with `Connection: close`: Node's parser may still refuse what follows on
   * them (the body of a request refused for its Transfer-Encoding), which must not be answered.
   */
  const closing = new WeakSet<Duplex>();
  const inFlight = new InFlight();
  const draining = { closeEachConnection: false };
  const server = createServer(
    {
      headersTimeout: IDLE_MS,
      // How often the head deadline is checked (30 s by default, which would triple it).
      connectionsCheckingInterval: 1_000,
      keepAliveTimeout: IDLE_MS,
      // uWS serves a request without Host; node:http would answer its own plain-text 400.
      requireHostHeader: false,
    },
    (req, res) => serve(req, res, options, { closing, inFlight, draining }),
  );
  // A head with `Expect: 100-continue`: answered 413 without `100 Continue` when its body is
  // over the cap (the client then need not send it), else told to go on.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (declaredLength(req) <= MAX_BODY_BYTES) res.writeContinue();
    serve(req, res, options, { closing, inFlight, draining });
  });
  server.on('clientError', (error: Error & { code?: string; reason?: string }, socket: Duplex) => {
    if (!closing.has(socket)) refuseUnparsable(error, socket, options);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        closeEachConnection: () => {
          draining.closeEachConnection = true;
        },
        close: async (timeoutMs) => {
          server.close();
          // Kept-alive connections with no request in flight would otherwise hold the close.
          server.closeIdleConnections();
          const unanswered = await inFlight.settled(timeoutMs);
          server.closeAllConnections();
          return unanswered;
        },
      });
    });
  });
}

/** What the requests of one server share. */
interface Serving {
  closing: WeakSet<Duplex>;
  inFlight: InFlight;
  draining: { closeEachConnection: boolean };
}

function serve(
  req: IncomingMessage,
  res: ServerResponse,
  options: ServerOptions,
  { closing, inFlight, draining }: Serving,
): void {
  // `open` while the handler may still answer; `discarding` after a 413 while the rest of the body
  // is being dropped; `streaming` while a StreamedBody is written; `done` once answered in full or
  // the client is gone.
  let state: 'open' | 'discarding' | 'streaming' | 'done' = 'open';
  let closeTimer: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  const finished = inFlight.begin();
  const settle = () => {
    state = 'done';
    finished();
    clearTimeout(closeTimer);
    clearTimeout(idleTimer);
  };
  res.once('close', settle);
  // A client that hangs up mid-body: no `end` follows, so nothing is dispatched.
  req.once('error', settle);

  const target = req.url ?? '/';
  const queryAt = target.indexOf('?');
  const path = queryAt < 0 ? target : target.slice(0, queryAt);
  const rawQuery = queryAt < 0 ? '' : target.slice(queryAt + 1);
  const headers: Record<string, string> = {};
  // A field sent on several lines is one list (RFC 9110, 5.3), as the uWS adapter reads it.
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (values) headers[name] = values.join(', ');
  }
  const method = req.method ?? 'GET';
  const request: Omit<HttpRequest, 'body'> = {
    method,
    path,
    query: new URLSearchParams(rawQuery),
    headers,
    // An IPv4 client of a dual-stack socket, as the uWS adapter reports it.
    remoteAddress: (req.socket.remoteAddress ?? '').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, ''),
  };
  const isHead = method === 'HEAD';

  /** Without a length, the body is chunked. */
  const writeHead = (reply: HttpReply, length: number | undefined, closeConnection: boolean) => {
    res.writeHead(reply.status, STATUS_CODES[reply.status] ?? '', {
      // JSON unless the reply names its own type (a raw body: see HttpReply.body).
      ...(reply.headers?.['Content-Type'] === undefined && {
        'Content-Type': 'application/json; charset=utf-8',
      }),
      ...reply.headers,
      ...(length !== undefined && { 'Content-Length': String(length) }),
      ...(closeConnection && { Connection: 'close' }),
    });
    if (closeConnection) closing.add(req.socket);
  };
  const send = (reply: HttpReply, closeConnection = false) => {
    if (state !== 'open' || res.destroyed) return;
    closeConnection ||= draining.closeEachConnection;
    if (reply.body instanceof StreamedBody && !isHead)
      return void stream(reply, reply.body.chunks, closeConnection);
    const body = bodyOf(reply);
    writeHead(reply, body.length, closeConnection); // throws on a header value with a line break
    state = 'done'; // answer once
    res.end(isHead ? undefined : body);
  };
  /** A StreamedBody (types.ts): each chunk written once the socket drained the one before. */
  const stream = async (reply: HttpReply, chunks: AsyncIterable<Buffer>, closeConnection: boolean) => {
    writeHead(reply, undefined, closeConnection);
    state = 'streaming';
    const iterator = chunks[Symbol.asyncIterator]();
    const gone = () => (state as string) !== 'streaming';
    try {
      for (;;) {
        const next = await iterator.next();
        if (gone() || next.done) break;
        if (!res.write(next.value)) {
          await new Promise<void>((resolve) => {
            const go = () => {
              res.off('drain', go).off('close', go);
              resolve();
            };
            res.on('drain', go).on('close', go);
          });
          if (gone()) break;
        }
      }
      if (!gone()) res.end();
    } catch (error) {
      options.onError(error, request);
      res.destroy(); // cut short: the client must not take a part for the whole
    } finally {
      await iterator.return?.();
    }
  };
  const refuse = (field: string, problem: string, closeConnection = false) =>
    send(options.onError(invalidInput({ [field]: problem }), request), closeConnection);

  /** The whole 413 at once, but the response left open while the rest of the body is dropped. */
  const answerTooLarge = () => {
    if (state !== 'open') return;
    state = 'discarding';
    const reply = options.tooLarge(request);
    const body = bodyOf(reply);
    writeHead(reply, body.length, true);
    if (isHead) res.flushHeaders();
    else res.write(body);
    closeTimer = setTimeout(endConnection, DISCARD_MS);
  };
  /** Ends the 413's response; node:http then closes the connection (`Connection: close`). */
  const endConnection = () => {
    if (state !== 'discarding') return;
    settle();
    res.end();
  };

  const dispatch = (body: Buffer) => {
    options
      .handler(Object.assign({}, request, { body }))
      .catch((error: unknown) => options.onError(error, request))
      .then((reply) => send(reply))
      .catch((error: unknown) => send(options.onError(error, request)))
      .catch(() => res.destroy()); // not even the error reply could be written
  };

  const transferEncoding = headers['transfer-encoding'];
  if (transferEncoding !== undefined && transferEncoding.toLowerCase() !== 'chunked') {
    // Node's parser takes `gzip, chunked` (chunked is final), but no other coding is decoded here.
    return refuse('transfer-encoding', 'only chunked is supported', true);
  }
  if (!path.startsWith('/')) return refuse('url', 'not a path (absolute-form and * are not served)');
  if (hasBadPercentEncoding(path, rawQuery)) return refuse('url', BAD_PERCENT_ENCODING_PROBLEM);
  const declared = declaredLength(req);
  // A body this edge would never read to its end anyway: the 413, and the connection closed.
  if (declared > DISCARD_LIMIT_BYTES) return send(options.tooLarge(request), true);
  if (declared > MAX_BODY_BYTES) answerTooLarge();

  let received = 0;
  const chunks: Buffer[] = [];
  const stillSending = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => req.destroy(), IDLE_MS);
  };
  stillSending();
  req.on('data', (chunk: Buffer) => {
    stillSending();
    received += chunk.byteLength;
    if (state === 'open' && received > MAX_BODY_BYTES) answerTooLarge();
    if (state === 'discarding') {
      if (received > DISCARD_LIMIT_BYTES) req.pause(); // the close timer ends it
      return;
    }
    if (state === 'open') chunks.push(chunk);
  });
  req.once('end', () => {
    clearTimeout(idleTimer);
    if (state === 'discarding') return endConnection();
    if (state === 'open') dispatch(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
  });
}

/** Node's parser has checked it is digits; an absent length is 0 (a chunked body is counted). */
const declaredLength = (req: IncomingMessage) => Number(req.headers['content-length'] ?? 0);

const bodyOf = (reply: HttpReply): Buffer =>
  Buffer.isBuffer(reply.body)
    ? reply.body // sent as it is (the widget bundles)
    : Buffer.from(
        reply.body === undefined || reply.body instanceof StreamedBody ? '' : JSON.stringify(reply.body), // (a HEAD's)
      );

/**
 * What Node's parser refuses never becomes a request: answered 400 in the error shape (the
 * header named, the parser's reason as the problem) and the connection closed. A head that took
 * too long, or a connection reset, is closed unanswered, as uWS does.
 */
function refuseUnparsable(
  error: Error & { code?: string; reason?: string },
  socket: Duplex,
  options: ServerOptions,
): void {
  // The client ended its side mid-request (a body shorter than its Content-Length): nothing to answer.
  if (!socket.writable || !error.code?.startsWith('HPE_') || error.code === 'HPE_INVALID_EOF_STATE') {
    socket.destroy();
    return;
  }
  const unparsed: Omit<HttpRequest, 'body'> = {
    method: '',
    path: '',
    query: new URLSearchParams(),
    headers: {},
    remoteAddress: '',
  };
  const field = REFUSED_FIELDS[error.code] ?? 'request';
  const reply = options.onError(invalidInput({ [field]: error.reason ?? error.message }), unparsed);
  const body = bodyOf(reply);
  const head = [
    `HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status] ?? ''}`,
    'Content-Type: application/json; charset=utf-8',
    ...Object.entries(reply.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    `Content-Length: ${body.length}`,
    'Connection: close',
  ];
  socket.end(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), body]));
}
