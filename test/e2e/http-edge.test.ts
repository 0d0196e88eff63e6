// The HTTP adapter under abuse, as clients on a bad network (or a hostile one) do it over raw TCP:
// uploads cut off halfway, a body shorter than its Content-Length, many hang-ups at once. The
// server must survive each, never treat a cut-off body as complete, and answer the next request.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Response } from '../../src/store/entities.ts';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';

/** Every raw exchange gives up after this long, so that a hung server fails the test, not the run. */
const SOCKET_DEADLINE_MS = 10_000;

describe('HTTP edge under abuse', () => {
  let app: RunningChorus;
  let port: number;
  let environmentId: string;
  let base: string;
  /** Normal traffic. */
  let surveyId: string;
  /** Only ever sent bodies that never arrived whole: it must never get a stored response. */
  let cutOffSurveyId: string;

  before(async () => {
    app = await startTestChorus('e2e_http_edge');
    port = app.chorus.port!;
    ({ environmentId } = await app.createEnvironment());
    base = `/api/v1/client/${environmentId}/responses`;
    surveyId = await app.createSurvey({ environmentId });
    cutOffSurveyId = await app.createSurvey({ environmentId });
  });
  after(() => app.stop());

  const head = (contentLength: number) =>
    `POST ${base} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${contentLength}\r\n\r\n`;
  const cutOffBody = (n: number) => JSON.stringify({ surveyId: cutOffSurveyId, finished: true, data: { n } });

  /** A normal request is answered, acknowledged and stored (the processor is still running). */
  async function assertServesNormally(what: string): Promise<void> {
    const reply = await call(app.baseUrl, 'POST', base, { surveyId, finished: true, data: { what } });
    assert.equal(reply.status, 200, `the request after ${what} answered ${reply.status}`);
    await waitFor(() => storedResponse(app.chorus.orm, reply.body.data.id), {
      what: `the response sent after ${what}`,
    });
  }

  /** Rows of the cut-off survey: a body that never arrived whole must never be dispatched. */
  const cutOffRows = () => app.chorus.orm.em.fork().count(Response, { surveyId: cutOffSurveyId });

  test('a client that hangs up halfway through a POST body does not disturb the server', async () => {
    const body = cutOffBody(1);
    const reply = await exchange(port, head(body.length) + body.slice(0, body.length / 2), 'destroy');
    assert.equal(reply, '', 'nothing is answered to a request whose body never arrived');

    await assertServesNormally('a hang-up halfway');
    assert.equal(await cutOffRows(), 0);
  });

  test('50 clients hanging up at once, halfway or right after their body, then a normal request gets 200', async () => {
    const hangUps = Array.from({ length: 50 }, (_, n) => {
      if (n % 2 === 0) {
        const body = cutOffBody(n);
        return exchange(port, head(body.length) + body.slice(0, body.length / 2), 'destroy');
      }
      // The whole body, then gone before the answer: the handler finishes after the client left,
      // and its answer must be dropped, not written to a closed response.
      const body = JSON.stringify({ surveyId, finished: true, data: { n } });
      return exchange(port, head(body.length) + body, 'destroy');
    });
    await Promise.all(hangUps);

    await assertServesNormally('50 hang-ups at once');
    assert.equal(await cutOffRows(), 0);
  });

  test('a body shorter than its Content-Length, then the connection closed, is never dispatched', async () => {
    // Valid JSON on its own: if the server took the close for the end of the body, it would store it.
    const body = cutOffBody(2);
    const reply = await exchange(port, head(body.length + 100) + body, 'end');
    assert.equal(reply, '', 'nothing is answered to a request whose body never arrived');

    await assertServesNormally('a short body');
    assert.equal(await cutOffRows(), 0);
  });

  test('a raw HTTP/1.1 client still gets its answer after the abuse', async () => {
    const body = JSON.stringify({ surveyId, finished: false, data: { raw: true } });
    const reply = await rawRequest(
      port,
      head(body.length).replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n') + body,
    );
    assert.equal(reply.status, 200);
    assert.match(reply.headers['content-type'] ?? '', /^application\/json/);
    assert.match(JSON.parse(reply.body).data.id, /^rsp_[a-z0-9]+$/);
  });

  test('an unknown route answers 404 JSON naming the method and path', async () => {
    const reply = await call(app.baseUrl, 'GET', '/api/v1/no-such-route');
    assert.equal(reply.status, 404);
    assert.match(reply.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(reply.body, {
      code: 'not_found',
      message: 'Not Found',
      details: { method: 'GET', path: '/api/v1/no-such-route' },
    });
  });

  test('a wrong method on a known route answers 405 JSON naming the method, with Allow and the route CORS', async () => {
    for (const method of ['GET', 'DELETE']) {
      const reply = await call(app.baseUrl, method, base);
      assert.equal(reply.status, 405, `${method} ${base}`);
      assert.match(reply.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(reply.headers.get('access-control-allow-origin'), '*');
      assert.equal(reply.headers.get('allow'), 'POST, OPTIONS');
      assert.deepEqual(reply.body, {
        code: 'method_not_allowed',
        message: 'Method Not Allowed',
        details: { method },
      });
    }
  });
});

/**
 * Writes `data` on a new connection and resolves with everything the server sent until the
 * connection closed. `then` says what the client does after writing: `destroy` drops the
 * connection at once, `end` closes its side cleanly, `wait` waits for the server to close.
 */
function exchange(port: number, data: string, then: 'destroy' | 'end' | 'wait'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.setTimeout(SOCKET_DEADLINE_MS, () =>
      socket.destroy(new Error(`the connection was still open after ${SOCKET_DEADLINE_MS} ms: ${received}`)),
    );
    socket.once('error', reject);
    socket.once('close', () => resolve(received));
    socket.write(data, () => {
      if (then === 'destroy') socket.destroy();
      else if (then === 'end') socket.end();
    });
  });
}

interface RawReply {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
}

/** Sends one complete request (with `Connection: close`) and reads the answer to the end. */
async function rawRequest(port: number, request: string): Promise<RawReply> {
  const received = await exchange(port, request, 'wait');
  const [head = '', ...rest] = received.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = Number(statusLine.split(' ')[1]);
  if (!Number.isInteger(status)) throw new Error(`not an HTTP answer: ${received}`);
  const headers = Object.fromEntries(
    lines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  return { status, headers, body: rest.join('\r\n\r\n') };
}
