// The only module that drives uWebSockets.js (uws-builds.ts loads whichever build fits). For every
// request it registers `onAborted` first, copies method, URL, headers and address before anything
// asynchronous, refuses what it can tell is malformed (400, also for a framing uWS is about to close
// the connection on), caps the body at MAX_BODY_BYTES (413, by Content-Length or while streaming),
// and always answers: a handler that throws still produces a JSON 500 through `onError`. A HEAD is
// answered with the headers of its GET and no body. What uWS refuses in its own parser never
// reaches this file (see "HTTP/1.1 at the edge" in docs/api.md). Its workarounds were measured
// against uWS 20.30 (the @trufflesuite build).
import { STATUS_CODES } from 'node:http';
import { invalidInput } from '../../errors.ts';
import {
  BAD_PERCENT_ENCODING_PROBLEM,
  DISCARD_LIMIT_BYTES,
  DISCARD_MS,
  hasBadPercentEncoding,
  METHODS_WITHOUT_BODY,
} from './request-rules.ts';
import {
  MAX_BODY_BYTES,
  type HttpReply,
  type HttpRequest,
  StreamedBody,
  type HttpServer,
  type ServerOptions,
} from './types.ts';
import type { Uws } from './uws-builds.ts';
import { InFlight } from './in-flight.ts';

/**
 * uWS 20.30 collects what is written while it parses in a 16 KiB cork buffer, and a connection it
 * closes for a parser error loses what is still there; a single write larger than the buffer is
 * sent at once.
 */
const CORK_BUFFER_BYTES = 16 * 1024;

/** A Content-Length uWS 20.30 reads: digits only, at most nine; it closes the connection on others. */
const READABLE_LENGTH = /^[0-9]{1,9}$/;
const DIGITS = /^[0-9]+$/;

export async function listenWithUws(uWS: Uws, options: ServerOptions): Promise<HttpServer> {
  const app = uWS.App();
  const inFlight = new InFlight();
  let closeEachConnection = false;
  app.any('/*', (res, req) => {
    // `open` while the handler may still answer; `discarding` after a 413 while the rest of the
    // body is being dropped; `done` once answered in full or aborted (res must not be touched).
    let state: 'open' | 'discarding' | 'done' = 'open';
    const finished = inFlight.begin();
    /** Set once a 413 is written: closes the connection at the latest DISCARD_MS later. */
    let closeTimer: NodeJS.Timeout | undefined;
    /** Set while a streamed body waits for the client to take a chunk. */
    let wake: (() => void) | undefined;
    res.onAborted(() => {
      state = 'done';
      finished();
      clearTimeout(closeTimer);
      wake?.();
    });

    const headers: Record<string, string> = {};
    let conflictingLengths = false;
    req.forEach((name, value) => {
      const before = headers[name];
      if (before === undefined) headers[name] = value;
      else if (name === 'content-length') conflictingLengths ||= before !== value;
      // A field sent on several lines is one list (RFC 9110, 5.3): none of its lines is lost.
      else headers[name] = `${before}, ${value}`;
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
      // JSON unless the reply names its own type (a raw body: see HttpReply.body).
      if (reply.headers?.['Content-Type'] === undefined) {
        res.writeHeader('Content-Type', 'application/json; charset=utf-8');
      }
      for (const [name, value] of Object.entries(reply.headers ?? {})) res.writeHeader(name, value);
    };

    /**
     * `flush` for a request uWS closes as soon as this handler returns (a Content-Length or
     * Transfer-Encoding it cannot read): the body is padded with spaces (still JSON) past
     * CORK_BUFFER_BYTES so that uWS writes the answer out before it closes.
     */
    const send = (reply: HttpReply, closeConnection = false, flush = false) => {
      if (state !== 'open') return;
      if (reply.body instanceof StreamedBody && !isHead) return void stream(reply, reply.body.chunks);
      closeConnection ||= closeEachConnection;
      state = 'done'; // answer once
      finished();
      let body = Buffer.isBuffer(reply.body)
        ? reply.body // sent as it is (the widget bundles)
        : reply.body === undefined || reply.body instanceof StreamedBody // (a HEAD's)
          ? ''
          : JSON.stringify(reply.body);
      if (flush && typeof body === 'string') body = body.padEnd(CORK_BUFFER_BYTES + 1);
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

    /** A StreamedBody (types.ts): uWS writes it chunked; `onWritable` says when to write on. */
    const stream = async (reply: HttpReply, chunks: AsyncIterable<Buffer>) => {
      const iterator = chunks[Symbol.asyncIterator]();
      const closeConnection = closeEachConnection;
      res.cork(() => writeHead(reply));
      try {
        for (;;) {
          const next = await iterator.next();
          if (state !== 'open') return; // aborted: `finally` closes the iterator
          if (next.done) break;
          let written = false;
          res.cork(() => {
            written = res.write(next.value);
          });
          if (!written) {
            // Resolved on the next turn of the loop: a promise settled inside a uWS callback has
            // its continuation run only when something else wakes Node (nothing may).
            await new Promise<void>((resolve) => {
              wake = () => setImmediate(resolve);
              res.onWritable(() => {
                setImmediate(resolve);
                return true;
              });
            });
            wake = undefined;
            if (state !== 'open') return;
          }
        }
        state = 'done';
        finished();
        res.cork(() => res.end(undefined, closeConnection));
      } catch (error) {
        if (state !== 'open') return;
        state = 'done';
        finished();
        res.close(); // cut short: the client must not take a part for the whole
        options.onError(error, request);
      } finally {
        if (state === 'done') await iterator.return?.();
      }
    };

    const refuse = (field: string, problem: string, closeConnection = false, flush = false) =>
      send(options.onError(invalidInput({ [field]: problem }), request), closeConnection, flush);

    const endConnection = () => {
      clearTimeout(closeTimer);
      if (state === 'done') return;
      state = 'done';
      finished();
      res.close();
    };
    /**
     * Writes the whole 413 (status line, headers with `Connection: close`, Content-Length, body)
     * but leaves the uWS response pending, so that this file can read and drop the rest of the
     * body and close the connection when it ends: `end(…, true)` closes it at once, while the
     * client may still be sending. uWS 20.30 adds nothing of its own before `end`/`write`, and
     * `writeHeader` writes `name: value\r\n` as given, so the last header carries the blank line
     * and the body, whose trailing CRLF is the one `writeHeader` adds (JSON allows it). A request
     * that follows on the connection finds the response pending, and uWS closes the connection.
     */
    const answerTooLarge = () => {
      if (state !== 'open') return;
      state = 'discarding';
      const reply = options.tooLarge(request);
      const body = JSON.stringify(reply.body);
      res.cork(() => {
        writeHead(reply);
        res.writeHeader('Date', new Date().toUTCString());
        res.writeHeader('Connection', 'close');
        const length = String(Buffer.byteLength(body) + 2);
        res.writeHeader('Content-Length', isHead ? `${length}\r\n` : `${length}\r\n\r\n${body}`);
      });
      closeTimer = setTimeout(endConnection, DISCARD_MS);
    };
    /** Body bytes read so far, kept or dropped. */
    let received = 0;
    let paused = false;
    /** After the 413: the end of the body ends the connection; past the bound, reading stops. */
    const discard = (isLast: boolean) => {
      if (isLast) {
        // After uWS has sent what this read wrote (the 413 itself, perhaps): it does so once
        // this callback returns, and a connection closed now would lose it.
        setImmediate(endConnection);
      } else if (received > DISCARD_LIMIT_BYTES && !paused) {
        paused = true;
        res.pause();
      }
    };

    const dispatch = (body: Buffer) => {
      options
        .handler({ method, path, query: request.query, headers, body, remoteAddress: request.remoteAddress })
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
    const contentLength = headers['content-length'];
    let declared = 0;
    if (contentLength) {
      // uWS closes the connection right after this handler on any other length: answered first.
      if (!READABLE_LENGTH.test(contentLength)) {
        if (DIGITS.test(contentLength) && Number(contentLength) > MAX_BODY_BYTES) {
          return send(options.tooLarge(request), true, true);
        }
        return refuse('content-length', 'not a length (up to nine digits)', true, true);
      }
      declared = Number(contentLength);
    }
    const transferEncoding = headers['transfer-encoding'];
    if (transferEncoding !== undefined && transferEncoding.toLowerCase() !== 'chunked') {
      // uWS reads any Transfer-Encoding as chunked, and closes the connection when the body is
      // not: RFC 9112 6.3 wants 400 and the connection closed when chunked is not the final
      // coding, and no other coding is decoded here.
      return refuse('transfer-encoding', 'only chunked is supported', true, true);
    }
    if (hasBadPercentEncoding(path, rawQuery)) {
      // uWS drops a body it has no reader for, so the connection stays usable.
      return refuse('url', BAD_PERCENT_ENCODING_PROBLEM);
    }
    if (declared > MAX_BODY_BYTES) {
      answerTooLarge();
    } else if (METHODS_WITHOUT_BODY.has(method) && !declared && transferEncoding === undefined) {
      return dispatch(Buffer.alloc(0));
    }

    const chunks: Buffer[] = [];
    res.onData((chunk, isLast) => {
      if (state === 'done') return;
      received += chunk.byteLength;
      if (state === 'open' && received > MAX_BODY_BYTES) answerTooLarge();
      if (state === 'discarding') return discard(isLast);
      // Copied now (uWS reuses the chunk's memory after this call), into a Buffer from Node's pool: a
      // copy of the ArrayBuffer (`chunk.slice(0)`) allocated a new one per request, a few µs each.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) dispatch(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
  });

  return new Promise((resolve, reject) => {
    app.listen(options.host, options.port, (socket) => {
      if (!socket) return reject(new Error(`cannot listen on ${options.host}:${options.port}`));
      resolve({
        port: uWS.us_socket_local_port(socket),
        closeEachConnection: () => {
          closeEachConnection = true;
        },
        close: async (timeoutMs) => {
          uWS.us_listen_socket_close(socket);
          const unanswered = await inFlight.settled(timeoutMs);
          // Kept-alive connections would hold the process until uWS's idle timeout (10 s). uWS
          // 20.30's typings lack `close`, but its App has it: every socket is closed.
          (app as unknown as { close(): void }).close();
          return unanswered;
        },
      });
    });
  });
}
