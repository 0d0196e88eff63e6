// The only module that knows uWebSockets.js. For every request it registers `onAborted` first,
// copies method, URL, headers and address before anything asynchronous, caps the body at
// MAX_BODY_BYTES (413, by Content-Length or while streaming), and always answers: a handler that
// throws still produces a JSON 500 through `onError`.
import { STATUS_CODES } from 'node:http';
import uWS from 'uWebSockets.js';
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
  /** The reply when the handler itself failed unexpectedly. */
  onError: (error: unknown, request: Omit<HttpRequest, 'body'>) => HttpReply;
}

const METHODS_WITHOUT_BODY = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE']);

export async function listen(options: ServerOptions): Promise<HttpServer> {
  const app = uWS.App();
  app.any('/*', (res, req) => {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });

    const headers: Record<string, string> = {};
    req.forEach((name, value) => {
      headers[name] = value;
    });
    const request: Omit<HttpRequest, 'body'> = {
      method: req.getMethod().toUpperCase(),
      path: req.getUrl(),
      query: new URLSearchParams(req.getQuery() ?? ''),
      headers,
      remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
    };

    const send = (reply: HttpReply, closeConnection = false) => {
      if (aborted) return;
      aborted = true; // answer once
      const body = reply.body === undefined ? '' : JSON.stringify(reply.body);
      res.cork(() => {
        res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? ''}`);
        res.writeHeader('Content-Type', 'application/json; charset=utf-8');
        for (const [name, value] of Object.entries(reply.headers ?? {})) res.writeHeader(name, value);
        res.end(body, closeConnection);
      });
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

    const declared = Number(headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) return send(options.tooLarge(request), true);
    if (METHODS_WITHOUT_BODY.has(request.method) && !declared && !headers['transfer-encoding']) {
      return dispatch(Buffer.alloc(0));
    }

    const chunks: Buffer[] = [];
    let received = 0;
    res.onData((chunk, isLast) => {
      if (aborted) return;
      received += chunk.byteLength;
      if (received > MAX_BODY_BYTES) return send(options.tooLarge(request), true);
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
