// A StreamedBody through both adapters: whole for a reader slower than the producer, the producer
// held back while the reader reads nothing (each chunk pulled once the socket took the one before),
// and for a client that hangs up mid-body the producer closed and pulled no more.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { listenWithNode } from './node-server.ts';
import { listenWithUws } from './uws-server.ts';
import { loadUws } from './uws-builds.ts';
import { StreamedBody, type HttpServer, type ServerOptions } from './types.ts';

const CHUNK = Buffer.alloc(64 * 1024, 'x');

interface Producer {
  pulled: number;
  closed: boolean;
  body: () => StreamedBody;
}

/** `total` chunks of 64 KiB (endless when undefined), counting what was pulled. */
function producer(total?: number): Producer {
  const state: Producer = {
    pulled: 0,
    closed: false,
    body: () =>
      new StreamedBody(
        (async function* () {
          try {
            while (total === undefined || state.pulled < total) {
              state.pulled++;
              yield CHUNK;
            }
          } finally {
            state.closed = true;
          }
        })(),
      ),
  };
  return state;
}

/** A GET of the streamed body at `port`; `act` runs on its first chunk, and then this resolves. */
function onFirstChunk(port: number, act: (req: ClientRequest, res: IncomingMessage) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = request({ port, path: '/' }, (res) => {
      res.once('data', () => {
        act(req, res);
        resolve();
      });
    });
    req.on('error', reject).end(); // once resolved (a request destroyed by `act`), ignored
  });
}

const uws = loadUws();
const adapters: [string, (options: ServerOptions) => Promise<HttpServer>][] = [
  ['node:http', listenWithNode],
  ...(uws.loaded
    ? [[uws.name, (o: ServerOptions) => listenWithUws(uws.uws, o)] as [string, typeof listenWithNode]]
    : []),
];

for (const [name, listen] of adapters) {
  describe(`a streamed body over ${name}`, () => {
    const serve = (make: () => StreamedBody) =>
      listen({
        host: '127.0.0.1',
        port: 0,
        handler: async () => ({ status: 200, headers: { 'Content-Type': 'text/plain' }, body: make() }),
        tooLarge: () => ({ status: 413, body: {} }),
        onError: () => ({ status: 500, body: {} }),
      });

    test('a slow reader gets every chunk', async () => {
      const source = producer(200); // 12.5 MiB
      const server = await serve(source.body);
      try {
        let received = 0;
        await new Promise<void>((resolve, reject) => {
          request({ port: server.port, path: '/' }, (res) => {
            assert.equal(res.headers['transfer-encoding'], 'chunked');
            res.on('data', (chunk: Buffer) => {
              received += chunk.length;
              res.pause();
              setTimeout(() => res.resume(), 1);
            });
            res.on('end', resolve);
            res.on('error', reject);
          })
            .on('error', reject)
            .end();
        });
        assert.equal(received, 200 * CHUNK.length);
        assert.ok(source.closed);
      } finally {
        await server.close(1_000);
      }
    });

    test('a reader that stops reading stops the producer once the socket buffers are full', async () => {
      const source = producer(); // endless
      const server = await serve(source.body);
      try {
        await onFirstChunk(server.port, (_req, res) => res.pause());
        // The kernel's buffers on loopback may take tens of MiB (tcp_rmem's maximum is 32 MiB on
        // some machines); a producer that ignored the reader would be pulled without end.
        let pulled = -1;
        for (let i = 0; i < 60 && source.pulled !== pulled; i++) {
          pulled = source.pulled;
          await sleep(100);
        }
        assert.equal(source.pulled, pulled, 'the producer is pulled no more while nothing is read');
        assert.ok(pulled * CHUNK.length < 64 * 2 ** 20, `${pulled} chunks pulled`);
      } finally {
        await server.close(1_000);
      }
    });

    test('a client that hangs up mid-body closes the producer, which is pulled no more', async () => {
      const source = producer();
      const server = await serve(source.body);
      try {
        await onFirstChunk(server.port, (req) => req.destroy());
        for (let i = 0; i < 100 && !source.closed; i++) await sleep(20);
        assert.ok(source.closed, 'the producer was closed');
        const pulled = source.pulled;
        await sleep(200);
        assert.equal(source.pulled, pulled, 'nothing pulled after the client left');
      } finally {
        await server.close(1_000);
      }
    });
  });
}
