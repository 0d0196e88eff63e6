// The ceiling the Chorus edge is compared with: a bare uWebSockets.js endpoint that reads the whole
// body of `POST /hello` and answers a small JSON, with none of Chorus' routing, validation or Kafka.
// It imports uWS directly (conventions keep uWS in src/edge/http/uws-server.ts): a baseline built
// on that adapter would already include part of what is being measured.
import uWS from 'uWebSockets.js';

export interface HelloServer {
  port: number;
  close(): void;
}

export function startHelloServer(host = '127.0.0.1'): Promise<HelloServer> {
  const app = uWS.App();
  app.post('/hello', (res) => {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    let received = 0;
    res.onData((chunk, isLast) => {
      received += chunk.byteLength;
      if (!isLast || aborted) return;
      res.cork(() => {
        res.writeHeader('Content-Type', 'application/json; charset=utf-8');
        res.end(`{"hello":"world","bytes":${received}}`);
      });
    });
  });
  return new Promise((resolve, reject) => {
    app.listen(host, 0, (socket) => {
      if (!socket) return reject(new Error(`hello server cannot listen on ${host}`));
      resolve({
        port: uWS.us_socket_local_port(socket),
        // Stops accepting; the load tool's keep-alive connections ended when its process exited.
        close: () => uWS.us_listen_socket_close(socket),
      });
    });
  });
}
