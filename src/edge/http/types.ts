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
  /** Serialised as JSON, except a Buffer, which is sent as it is (give it its `Content-Type`). */
  body: unknown;
  /** The route pattern that answered (for metrics), set by the router. */
  route?: string;
}

export type HttpHandler = (request: HttpRequest) => Promise<HttpReply>;

/** The largest request body the edge accepts (compat notes): larger ones get 413. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;
