// The edge's view of HTTP, independent of the server library: handlers are plain functions from a
// request to a reply, so tests can call them without a socket.

export interface HttpRequest {
  /** Upper case: GET, POST, … */
  method: string;
  path: string;
  query: URLSearchParams;
  /** Lower-case names. */
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  remoteAddress: string;
}

export interface HttpReply {
  status: number;
  /** Names as written on the wire; a `Content-Type` here replaces the adapter's JSON one. */
  headers?: Record<string, string>;
  /**
   * Serialised as JSON, except a Buffer, which is sent as it is, and a StreamedBody, written as it is
   * produced (give either its `Content-Type`).
   */
  body: unknown;
  /** The route pattern that answered (for metrics), set by the router. */
  route?: string;
}

/**
 * A body written chunk by chunk (chunked transfer encoding), each chunk pulled once the client took
 * the one before, so that what waits in memory is one chunk, however long the body. When the
 * client leaves, the chunks' iterator is closed (`return`): its `finally` stops whatever produces
 * them. A chunk that fails after the head was sent ends the connection mid-body, so that the client
 * sees the body cut short rather than complete.
 */
export class StreamedBody {
  constructor(readonly chunks: AsyncIterable<Buffer>) {}
}

export type HttpHandler = (request: HttpRequest) => Promise<HttpReply>;

/** The largest request body the edge accepts (compat notes): larger ones get 413. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** A listening adapter (uws-server.ts or node-server.ts). */
export interface HttpServer {
  port: number;
  /**
   * From now on every answer closes its connection (`Connection: close`): a client or a load
   * balancer holding a kept-alive connection opens its next one, to another edge, rather than
   * sending on one this edge is about to close (a request lost in that race could not be retried).
   */
  closeEachConnection(): void;
  /**
   * Stops accepting connections; resolves once no request is in flight (each answered, or its
   * client gone), or after `timeoutMs` with how many were still in flight.
   */
  close(timeoutMs: number): Promise<number>;
}

/** What the edge gives an adapter: the same for every adapter, so they answer alike. */
export interface ServerOptions {
  host: string;
  port: number;
  handler: HttpHandler;
  /** The reply for a body over the cap (built by the caller's error mapping). */
  tooLarge: (request: Omit<HttpRequest, 'body'>) => HttpReply;
  /** The reply when the handler failed, or when the adapter refuses a request (a ChorusError). */
  onError: (error: unknown, request: Omit<HttpRequest, 'body'>) => HttpReply;
}
