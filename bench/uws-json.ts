// What the bench's bare uWebSockets.js endpoints share (kafka-ceiling-server.ts, session-floor.ts):
// a JSON body read in full, and a JSON answer once the work it started is done, or a 503 if it
// failed; nothing is written to a request the client abandoned.
import type uWS from 'uWebSockets.js';

export type JsonBody = Record<string, unknown>;

/** Reads the JSON body, then answers 200 with what `handle` resolves to, or 503 if it rejects. */
export function answerJsonBody(res: uWS.HttpResponse, handle: (body: JsonBody) => Promise<string>): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  const chunks: Buffer[] = [];
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast) return;
    const reply = (status: string, body: string) => {
      if (!aborted) answerJson(res, body, status);
    };
    handle(JSON.parse(Buffer.concat(chunks).toString()) as JsonBody).then(
      (body) => reply('200 OK', body),
      () => reply('503 Service Unavailable', '{"code":"unavailable"}'),
    );
  });
}

/** Writes a JSON answer at once (within a uWS handler, or after its onAborted said it is still open). */
export function answerJson(res: uWS.HttpResponse, body: string, status = '200 OK'): void {
  res.cork(() => {
    res.writeStatus(status);
    res.writeHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(body);
  });
}
