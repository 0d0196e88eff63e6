// A StreamedBody through both adapters: whole and in order for a reader slower than the producer
// (each chunk pulled once the one before was taken), and for a client that hangs up mid-body the
// producer is closed and pulled no more.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
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

    test('a slow reader gets every chunk, and the producer runs only a little ahead of it', async () => {
      const source = producer(200); // 12.5 MiB
      const server = await serve(source.body);
      try {
        let received = 0;
        let aheadAtMost = 0;
        await new Promise<void>((resolve, reject) => {
          request({ port: server.port, path: '/' }, (res) => {
            assert.equal(res.headers['transfer-encoding'], 'chunked');
            res.on('data', (chunk: Buffer) => {
              received += chunk.length;
              aheadAtMost = Math.max(aheadAtMost, source.pulled * CHUNK.length - received);
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
        // Socket buffers on both sides hold a few MiB at most; a producer that ignored the reader
        // would have been 12 MiB ahead.
        assert.ok(aheadAtMost < 8 * 2 ** 20, `${aheadAtMost} bytes ahead`);
      } finally {
        await server.close(1_000);
      }
    });

    test('a client that hangs up mid-body closes the producer, which is pulled no more', async () => {
      const source = producer();
      const server = await serve(source.body);
      try {
        await new Promise<void>((resolve, reject) => {
          const req = request({ port: server.port, path: '/' }, (res) => {
            res.once('data', () => {
              req.destroy();
              resolve();
            });
          }).on('error', () => undefined);
          req.on('error', reject);
          req.end();
        });
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
