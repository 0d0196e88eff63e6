// The only module that knows uWebSockets.js. For every request it registers `onAborted` first,
// copies method, URL, headers and address before anything asynchronous, refuses what it can tell
// is malformed (400), caps the body at MAX_BODY_BYTES (413, by Content-Length or while streaming),
// and always answers: a handler that throws still produces a JSON 500 through `onError`. A HEAD is
// answered with the headers of its GET and no body. What uWS refuses in its own parser never
// reaches this file (see "HTTP/1.1 at the edge" in docs/api.md).
import { STATUS_CODES } from 'node:http';
import uWS from 'uWebSockets.js';
import { invalidInput } from '../../errors.ts';
import { MAX_BODY_BYTES, type HttpHandler, type HttpReply, type HttpRequest } from './types.ts';

export interface HttpServer {
  port: number;
  close(): void;
}

export interface ServerOptions {
  host: string;
  port: number;
  handler: HttpHandler;
  /** The reply for a body over the cap (built by the caller's error mapping). */
  tooLarge: (request: Omit<HttpRequest, 'body'>) => HttpReply;
  /** The reply when the handler failed, or when this adapter refuses a request (a ChorusError). */
  onError: (error: unknown, request: Omit<HttpRequest, 'body'>) => HttpReply;
}

const METHODS_WITHOUT_BODY = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE']);

/**
 * After a 413 the rest of the body is read and dropped, as long as the whole body stays within
 * this bound, before the connection is closed: closing while the client is still sending resets
 * the connection, and the client loses the answer it has not read yet.
 */
const READ_LIMIT_BYTES = 5 * MAX_BODY_BYTES;

/** A `%` that does not start two hex digits, or an encoded NUL (which PostgreSQL refuses in text). */
const BAD_PERCENT_ENCODING = /%(?![0-9a-f]{2})|%00/i;

export async function listen(options: ServerOptions): Promise<HttpServer> {
  const app = uWS.App();
  app.any('/*', (res, req) => {
    // `open` while the handler may still answer; `discarding` after a 413 while the rest of the
    // body is being dropped; `done` once answered in full or aborted (res must not be touched).
    let state: 'open' | 'discarding' | 'done' = 'open';
    res.onAborted(() => {
      state = 'done';
    });

    const headers: Record<string, string> = {};
    let conflictingLengths = false;
    req.forEach((name, value) => {
      if (name === 'content-length' && headers[name] !== undefined && headers[name] !== value) {
        conflictingLengths = true;
      }
      headers[name] = value;
    });
    // uWS routes only the standard methods (it closes the connection on any other), upper case.
    const method = req.getCaseSensitiveMethod();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const request: Omit<HttpRequest, 'body'> = {
      method,
      path,
      query: new URLSearchParams(rawQuery),
      headers,
      remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
    };
    const isHead = method === 'HEAD';

    const writeHead = (reply: HttpReply) => {
      res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? ''}`);
      res.writeHeader('Content-Type', 'application/json; charset=utf-8');
      for (const [name, value] of Object.entries(reply.headers ?? {})) res.writeHeader(name, value);
    };

    const send = (reply: HttpReply, closeConnection = false) => {
      if (state !== 'open') return;
      state = 'done'; // answer once
      const body = reply.body === undefined ? '' : JSON.stringify(reply.body);
      res.cork(() => {
        writeHead(reply);
        if (!isHead) {
          res.end(body, closeConnection);
        } else if (closeConnection) {
          res.end('', true); // no body (Content-Length: 0), and the connection ends anyway
        } else {
          // The length its GET would have, written here: in uWS 20.30 `endWithoutBody(length)`
          // adds its own header, and any argument leaves the response pending, which then breaks
          // the connection.
          res.writeHeader('Content-Length', String(Buffer.byteLength(body)));
          res.endWithoutBody();
        }
      });
    };

    const refuse = (field: string, problem: string, closeConnection = false) =>
      send(options.onError(invalidInput({ [field]: problem }), request), closeConnection);

    /**
     * Answers 413 at once, as a chunked response (with `Connection: close`) whose last chunk is
     * sent once the body has been read to its end; past READ_LIMIT_BYTES the connection is
     * closed. (uWS 20.30 garbles a chunked response ended with `closeConnection`, so the client,
     * told `Connection: close`, closes it; else the idle timeout does.)
     */
    const answerTooLarge = () => {
      if (state !== 'open') return;
      state = 'discarding';
      const reply = options.tooLarge(request);
      res.cork(() => {
        writeHead(reply);
        res.writeHeader('Connection', 'close');
        res.write(JSON.stringify(reply.body));
      });
    };
    /** Body bytes read so far, kept or dropped. */
    let received = 0;
    /** After the 413: the end of the body ends the answer; past the bound the connection ends. */
    const discard = (isLast: boolean) => {
      if (isLast) {
        state = 'done';
        res.cork(() => res.end());
      } else if (received > READ_LIMIT_BYTES) {
        state = 'done';
        res.close();
      }
    };

    const dispatch = (body: Buffer) => {
      options
        .handler({ ...request, body })
        .catch((error: unknown) => options.onError(error, request))
        .then(
          (reply) => send(reply),
          (error: unknown) => send(options.onError(error, request)),
        );
    };

    // uWS reads the body by the first Content-Length: a second one that disagrees makes the
    // request ambiguous (request smuggling through a proxy that reads the other), so the
    // connection is closed after the answer.
    if (conflictingLengths) return refuse('content-length', 'conflicting Content-Length headers', true);
    if (
      (path.includes('%') && BAD_PERCENT_ENCODING.test(path)) ||
      (rawQuery.includes('%') && BAD_PERCENT_ENCODING.test(rawQuery))
    ) {
      // uWS drops a body it has no reader for, so the connection stays usable.
      return refuse('url', 'invalid percent-encoding (a % without two hex digits, or %00)');
    }
    const declared = Number(headers['content-length'] ?? 0);
    // A body that cannot be read within the bound: answered, and the connection closed at once.
    if (declared > READ_LIMIT_BYTES) return send(options.tooLarge(request), true);
    if (declared > MAX_BODY_BYTES) {
      answerTooLarge();
    } else if (METHODS_WITHOUT_BODY.has(method) && !declared && !headers['transfer-encoding']) {
      return dispatch(Buffer.alloc(0));
    }

    const chunks: Buffer[] = [];
    res.onData((chunk, isLast) => {
      if (state === 'done') return;
      received += chunk.byteLength;
      if (state === 'open' && received > MAX_BODY_BYTES) answerTooLarge();
      if (state === 'discarding') return discard(isLast);
      chunks.push(Buffer.from(chunk.slice(0))); // uWS reuses the chunk's memory after this call
      if (isLast) dispatch(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
  });

  return new Promise((resolve, reject) => {
    app.listen(options.host, options.port, (socket) => {
      if (!socket) return reject(new Error(`cannot listen on ${options.host}:${options.port}`));
      resolve({
        port: uWS.us_socket_local_port(socket),
        close: () => uWS.us_listen_socket_close(socket),
      });
    });
  });
}
