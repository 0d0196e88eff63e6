// The HTTP adapter under abuse, as clients on a bad network (or a hostile one) do it over raw TCP:
// uploads cut off halfway, a body shorter than its Content-Length, many hang-ups at once. The
// server must survive each, never treat a cut-off body as complete, and answer the next request.
// One suite for both adapters (HTTP_SERVER): http-edge-uws.test.ts and http-edge-node.test.ts run
// it; where their parsers differ (what uWS closes unanswered, Node answers 400), each has its test,
// and so has each uWS build (uws-builds.ts): 20.30 closes unanswered what its parser refuses, 20.57
// answers it itself. http-edge-debian13.test.ts runs the uWS one on the image's Node and Debian 13.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { loadUws } from '../../src/edge/http/uws-builds.ts';
import { Response } from '../../src/store/entities.ts';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';

/** Every raw exchange gives up after this long, so that a hung server fails the test, not the run. */
const SOCKET_DEADLINE_MS = 10_000;

export function httpEdgeSuite(server: 'uws' | 'node', skip: string | false = false): void {
  describe(`HTTP edge under abuse (HTTP_SERVER=${server})`, { skip }, () => {
    httpEdgeTests(server);
  });
}

function httpEdgeTests(server: 'uws' | 'node'): void {
  const build = server === 'uws' ? loadUws() : undefined;
  /** What the edge must say serves it: node:http, or the uWS build that loads here. */
  const adapter = server === 'node' ? 'node:http' : build?.loaded ? build.name : 'no uWS build';
  /** `20.30` or `20.57` (the builds' names end in their versions); undefined over node:http. */
  const uwsVersion = server === 'uws' ? /@(\d+\.\d+)\.\d+[^@]*$/.exec(adapter)?.[1] : undefined;
  let app: RunningChorus;
  let port: number;
  let environmentId: string;
  let base: string;
  /** Normal traffic. */
  let surveyId: string;
  /** Only ever sent bodies that never arrived whole: it must never get a stored response. */
  let cutOffSurveyId: string;

  before(async () => {
    app = await startTestChorus(`e2e_http_edge_${server}`, { env: { HTTP_SERVER: server } });
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

  test(`the edge serves through ${adapter}`, (t) => {
    t.diagnostic(`served by ${app.chorus.httpAdapter} on Node ${process.versions.node}`);
    assert.equal(app.chorus.httpAdapter, adapter);
  });

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

  test('pipelined requests on one connection are answered in order, and a HEAD gets its GET status and headers without a body', async () => {
    const request = (method: string, path: string, extra = '') =>
      `${method} ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;
    const received = await exchange(
      port,
      request('GET', '/health') +
        request('HEAD', '/health') +
        request('GET', '/api/v1/no-such-route') +
        request('POST', '/health', 'Content-Length: 0\r\n') +
        request('HEAD', '/api/v1/management/responses') +
        // Readiness is answered from its latest background check, so requests may follow it.
        request('HEAD', '/api/v2/health') +
        request('GET', '/api/v2/health') +
        request('GET', '/health', 'Connection: close\r\n'),
      'wait',
    );
    const answers = readAnswers(received, [false, true, false, false, true, true, false, false]);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 404, 405, 401, 200, 200, 200],
    );
    const [live, liveHead, notFound, wrongMethod, unauthenticated, readyHead, ready] = answers;
    assert.deepEqual(JSON.parse(ready!.body).data, {
      main_database: true,
      cache_database: true,
      event_log: true,
    });
    assert.deepEqual(JSON.parse(live!.body), { status: 'ok' });
    assert.equal(liveHead!.headers['content-length'], String(live!.body.length));
    assert.equal(liveHead!.body, '');
    assert.equal(JSON.parse(notFound!.body).code, 'not_found');
    assert.equal(JSON.parse(wrongMethod!.body).code, 'method_not_allowed');
    assert.equal(wrongMethod!.headers.allow, 'GET, HEAD');
    assert.match(unauthenticated!.headers['content-type'] ?? '', /^application\/json/);
    assert.equal(readyHead!.body, '');
  });

  test('a URL with %00 or broken percent-encoding answers 400 in the error shape, and a long one 404', async () => {
    const management = '/api/v1/management/responses';
    for (const target of [
      `${management}/%00`,
      `${management}/rsp_%zz`,
      `${management}/%C3%28`,
      `${management}?limit=%00`,
      `/api/v1/client/${environmentId}/environment%`,
    ]) {
      const reply = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.equal(reply.status, 400, target);
      assert.equal(JSON.parse(reply.body).code, 'bad_request', target);
    }
    // uWS 20.57 answers a head over 4 KiB 431 itself (uws2057ParserTests).
    const long = `/api/v1/${'a'.repeat(uwsVersion === '20.57' ? 4000 : 8000)}`;
    const reply = await rawRequest(port, `GET ${long} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assert.equal(reply.status, 404);
    assert.equal(JSON.parse(reply.body).code, 'not_found');
  });

  test('two Content-Length headers that disagree answer 400 and close the connection', async () => {
    const body = JSON.stringify({ surveyId: cutOffSurveyId, finished: true, data: {} });
    const reply = await rawRequest(
      port,
      head(body.length).replace('\r\n\r\n', `\r\nContent-Length: ${body.length + 5}\r\n\r\n`) + body,
    );
    assert.equal(reply.status, 400);
    // Node's parser refuses any second Content-Length, in its own words.
    assert.match(
      JSON.parse(reply.body).details['content-length'],
      server === 'uws' ? /^conflicting Content-Length headers$/ : /^Duplicate Content-Length$/,
    );
    assert.equal(reply.headers.connection, 'close');
    assert.equal(await cutOffRows(), 0);
  });

  /** Tries of each 413 exchange (a lost answer is a race, so one try could pass by luck). */
  const ATTEMPTS = 5;
  for (const encoding of ['content-length', 'chunked'] as const) {
    test(`a client still sending a body over the cap (${encoding}) reads its 413`, async () => {
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const chunks = 48; // 3 MiB
      const start =
        `POST ${base} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        (encoding === 'chunked'
          ? 'Transfer-Encoding: chunked\r\n\r\n'
          : `Content-Length: ${chunk.length * chunks}\r\n\r\n`);
      const frame = (data: Buffer) =>
        encoding === 'chunked'
          ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')])
          : data;
      // The loss is a race: several tries, every one must read its answer.
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        const received = await uploadAndRead(
          port,
          start,
          Array.from({ length: chunks }, () => frame(chunk)),
          encoding === 'chunked' ? '0\r\n\r\n' : '',
        );
        const [answer] = readAnswers(withoutContinue(received), [false]);
        assert.equal(answer?.status, 413, `attempt ${attempt}: ${received.slice(0, 200)}`);
        assert.equal(JSON.parse(answer?.body ?? '').code, 'payload_too_large');
      }
    });
  }

  test('a body over the cap announced with Expect: 100-continue gets its 413', async () => {
    const size = 3 * 1024 * 1024;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const received = await uploadAndRead(
        port,
        `POST ${base} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${size}\r\nExpect: 100-continue\r\n\r\n`,
        [Buffer.alloc(size, 'a')],
        '',
      );
      const [answer] = readAnswers(withoutContinue(received), [false]);
      assert.equal(answer?.status, 413, `attempt ${attempt}: ${received.slice(0, 200)}`);
      assert.equal(JSON.parse(answer?.body ?? '').code, 'payload_too_large');
    }
  });

  const unreadable =
    server === 'uws'
      ? 'a Content-Length uWS cannot read is answered 400 (413 past nine digits)'
      : "a Content-Length Node's parser cannot read is answered 400 (a 20 GB one 413)";
  test(`${unreadable} before the connection closes`, async () => {
    for (const [length, status] of [
      ['-5', 400],
      ['abc', 400],
      ['5, 6', 400],
      ['+5', 400],
      ['1e3', 400],
      // uWS reads at most nine digits; Node reads this one as 5.
      ...(server === 'uws' ? ([['0000000005', 400]] as const) : []),
      ['20000000000', 413],
    ] as const) {
      const reply = await rawRequest(
        port,
        head(5).replace('Content-Length: 5', `Content-Length: ${length}`) + '{"a":1}',
      );
      assert.equal(reply.status, status, `Content-Length: ${length}`);
      const body = JSON.parse(reply.body);
      const problem = server === 'uws' ? /not a length/ : /Invalid character in Content-Length/;
      if (status === 400) assert.match(body.details['content-length'], problem, length);
      else assert.equal(body.code, 'payload_too_large');
      assert.equal(reply.headers.connection, 'close', length);
    }
    assert.equal(await cutOffRows(), 0);
  });

  test('a Transfer-Encoding other than chunked is answered 400 before the connection closes', async () => {
    for (const coding of ['gzip', 'gzip, chunked', 'identity']) {
      const body = cutOffBody(3);
      const reply = await rawRequest(
        port,
        head(0).replace('Content-Length: 0', `Transfer-Encoding: ${coding}`) +
          `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
      assert.equal(reply.status, 400, coding);
      assert.equal(JSON.parse(reply.body).details['transfer-encoding'], 'only chunked is supported');
      assert.equal(reply.headers.connection, 'close', coding);
    }
    assert.equal(await cutOffRows(), 0);
  });

  test('a 413 is whole at once, even when the body never comes (with or without Expect: 100-continue)', async () => {
    for (const expect of ['', 'Expect: 100-continue\r\n']) {
      const started = Date.now();
      const received = await exchange(
        port,
        head(5 * 1024 * 1024).replace('\r\n\r\n', `\r\n${expect}\r\n`),
        'until-answered',
      );
      // Without its end, the answer would wait for uWS's idle timeout (10 s) and arrive cut off.
      assert.ok(Date.now() - started < 5000, `${expect || 'no Expect'}: ${Date.now() - started} ms`);
      // uWS (20.30 and 20.57) writes `100 Continue` itself before any handler runs (docs/api.md); over
      // node:http the edge answers the head alone, and the client need not send the body.
      if (expect && server === 'uws')
        assert.match(received, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 413 /);
      if (server === 'node') assert.match(received, /^HTTP\/1\.1 413 /);
      const [answer] = readAnswers(withoutContinue(received), [false]);
      assert.equal(answer?.status, 413);
      assert.equal(answer?.headers.connection, 'close');
      assert.equal(JSON.parse(answer?.body ?? '').code, 'payload_too_large');
    }
  });

  test('after a 413 the connection ends: a request behind the body is not answered', async () => {
    const size = 3 * 1024 * 1024;
    const received = await exchange(
      port,
      head(size) + ' '.repeat(size) + 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n',
      'wait',
    );
    assert.deepEqual(
      readAnswers(received, [false]).map((answer) => answer.status),
      [413],
    );
  });

  for (const size of [11_000_000, 20_000_000]) {
    test(`a ${size / 1e6} MB body gets its 413, whether the client reads while sending or only once it has sent it all`, async () => {
      // Node's http client reads while it sends (as fetch, curl and browsers do).
      const status = await new Promise<number | string>((resolve) => {
        const req = httpRequest({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: base,
          headers: { 'content-type': 'application/json', 'content-length': size },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        req.end(Buffer.alloc(size, 0x20));
      });
      assert.equal(status, 413, 'a client that reads while sending');
      // One that reads only once all is sent (as Python's http.client does) needs the body read.
      const received = await sendAllThenRead(port, head(size), Buffer.alloc(size, 0x20));
      const [answer] = readAnswers(received, [false]);
      assert.equal(answer?.status, 413, `a client that reads after sending: ${received.slice(0, 200)}`);
    });
  }

  if (server === 'node') nodeParserTests();
  else if (uwsVersion === '20.30') uws2030ParserTests();
  else uws2057ParserTests();

  function uws2030ParserTests() {
    test('what uWS refuses in its parser: the connection is closed at once, with no answer', async () => {
      const pipelined = JSON.stringify({ surveyId, finished: false, data: { pipelined: true } });
      // See "HTTP/1.1 at the edge" in docs/api.md: these never reach Chorus.
      const cases = {
        'an unknown method': `PROPFIND ${base} HTTP/1.1\r\nHost: x\r\n\r\n`,
        'a lower-case method': `get /health HTTP/1.1\r\nHost: x\r\n\r\n`,
        'Content-Length and Transfer-Encoding': `${head(3).replace('\r\n\r\n', '\r\nTransfer-Encoding: chunked\r\n\r\n')}0\r\n\r\n`,
        'a chunk size that is not hex': `${head(0).replace('Content-Length: 0', 'Transfer-Encoding: chunked')}zz\r\n{}\r\n0\r\n\r\n`,
        // A write waits for Kafka; uWS closes a connection whose next request arrives meanwhile.
        'a request pipelined behind a write': `${head(pipelined.length)}${pipelined}GET /health HTTP/1.1\r\nHost: x\r\n\r\n`,
      };
      for (const [what, data] of Object.entries(cases)) {
        const started = Date.now();
        const reply = await exchange(port, data, 'wait');
        assert.equal(reply, '', what);
        // Well before uWS's 10 s idle timeout, which closes the cases of the next test.
        assert.ok(Date.now() - started < 5000, `${what}: closed after ${Date.now() - started} ms`);
      }
      await assertServesNormally('connections uWS closed');
    });

    test('what uWS cannot parse (49+ header fields, HTTP/1.0, a malformed request line) is closed by its idle timeout, unanswered', async () => {
      const fields = Array.from({ length: 49 }, (_, i) => `X-Field-${i}: v\r\n`).join('');
      const cases = [
        `GET /health HTTP/1.1\r\n${fields}\r\n`,
        'GET /health HTTP/1.0\r\n\r\n',
        'GET http://x/health HTTP/1.1\r\nHost: x\r\n\r\n',
        'hello\r\n\r\n',
      ];
      const replies = await Promise.all(cases.map((data) => exchange(port, data, 'wait', 30_000)));
      assert.deepEqual(replies, ['', '', '', '']);
    });
  }

  function uws2057ParserTests() {
    test('what uWS 20.57 refuses in its parser it answers itself (400, 431, 505, an HTML page), closing the connection at once', async () => {
      const fields = (n: number) => Array.from({ length: n }, (_, i) => `X-Field-${i}: v\r\n`).join('');
      // See "HTTP/1.1 at the edge" in docs/api.md: these never reach Chorus.
      const cases: [string, string, number][] = [
        [
          'Content-Length and Transfer-Encoding',
          `${head(3).replace('\r\n\r\n', '\r\nTransfer-Encoding: chunked\r\n\r\n')}0\r\n\r\n`,
          400,
        ],
        [
          'a chunk size that is not hex',
          `${head(0).replace('Content-Length: 0', 'Transfer-Encoding: chunked')}zz\r\n{}\r\n0\r\n\r\n`,
          400,
        ],
        ['HTTP/1.1 without Host', 'GET /health HTTP/1.1\r\n\r\n', 400],
        ['a folded header line', 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n', 400],
        ['a NUL in a header value', 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n', 400],
        ['a header line without a colon', 'GET /health HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n', 400],
        ['99 header fields', `GET /health HTTP/1.1\r\nHost: x\r\n${fields(98)}\r\n`, 431],
        [
          'a head over 4 KiB (an 8,000-character URL)',
          `GET /api/v1/${'a'.repeat(8000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
          431,
        ],
        [
          'a 96 KiB header',
          `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(96 * 1024)}\r\n\r\n`,
          431,
        ],
        ['HTTP/1.0', 'GET /health HTTP/1.0\r\nHost: x\r\n\r\n', 505],
        ['bare LF line ends', 'GET /health HTTP/1.1\nHost: x\n\n', 505],
        ['an absolute-form target', 'GET http://x/health HTTP/1.1\r\nHost: x\r\n\r\n', 505],
      ];
      for (const [what, data, status] of cases) {
        const started = Date.now();
        const reply = await rawRequest(port, data);
        assert.equal(reply.status, status, what);
        assert.match(reply.body, /^<h1>/, `${what}: uWS's page, not Chorus's error shape`);
        assert.ok(Date.now() - started < 5000, `${what}: closed after ${Date.now() - started} ms`);
      }
      await assertServesNormally('connections uWS answered itself');
    });

    test('uWS 20.57 passes unknown methods to Chorus (405) and serves 60 header fields; a request pipelined behind a write still closes the connection unanswered', async () => {
      const close = 'Connection: close\r\n';
      for (const [request, allow] of [
        [`PROPFIND ${base} HTTP/1.1\r\nHost: x\r\n${close}\r\n`, 'POST, OPTIONS'],
        [`get /health HTTP/1.1\r\nHost: x\r\n${close}\r\n`, 'GET, HEAD'],
      ] as const) {
        const reply = await rawRequest(port, request);
        assert.equal(reply.status, 405, request);
        assert.equal(JSON.parse(reply.body).code, 'method_not_allowed');
        assert.equal(reply.headers.allow, allow);
      }
      const fields = Array.from({ length: 60 }, (_, i) => `X-Field-${i}: v\r\n`).join('');
      assert.equal(
        (await rawRequest(port, `GET /health HTTP/1.1\r\nHost: x\r\n${fields}${close}\r\n`)).status,
        200,
      );

      // A write waits for Kafka; uWS closes a connection whose next request arrives meanwhile.
      const pipelined = JSON.stringify({ surveyId, finished: false, data: { pipelined: true } });
      const started = Date.now();
      const reply = await exchange(
        port,
        `${head(pipelined.length)}${pipelined}GET /health HTTP/1.1\r\nHost: x\r\n\r\n`,
        'wait',
      );
      assert.equal(reply, '');
      assert.ok(Date.now() - started < 5000, `closed after ${Date.now() - started} ms`);
      await assertServesNormally('a request pipelined behind a write');
    });

    test('what uWS 20.57 cannot parse (no version, garbage) or a head that never ends is closed unanswered by its idle timeout, after about 30 s', async () => {
      const started = Date.now();
      const replies = await Promise.all(
        ['GET /health\r\nHost: x\r\n\r\n', 'hello\r\n\r\n', 'GET /health HTTP/1.1\r\nHost: x\r\n'].map(
          (data) => exchange(port, data, 'wait', 50_000),
        ),
      );
      assert.deepEqual(replies, ['', '', '']);
      // uWS 20.30 closes after 10 s; 20.57 waits three times as long (uSockets ticks every 4 s).
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 25_000 && elapsed < 45_000, `closed after ${elapsed} ms`);
    });
  }

  function nodeParserTests() {
    test("what Node's parser refuses is answered 400 in the error shape, and the connection closed", async () => {
      const cases = {
        'a lower-case method': `get /health HTTP/1.1\r\nHost: x\r\n\r\n`,
        'Content-Length and Transfer-Encoding': `${head(3).replace('\r\n\r\n', '\r\nTransfer-Encoding: chunked\r\n\r\n')}0\r\n\r\n`,
        'a chunk size that is not hex': `${head(0).replace('Content-Length: 0', 'Transfer-Encoding: chunked')}zz\r\n{}\r\n0\r\n\r\n`,
        'a malformed request line': 'hello\r\n\r\n',
      };
      for (const [what, data] of Object.entries(cases)) {
        const started = Date.now();
        const reply = await rawRequest(port, data);
        assert.equal(reply.status, 400, what);
        assert.equal(JSON.parse(reply.body).code, 'bad_request', what);
        assert.equal(reply.headers.connection, 'close', what);
        assert.ok(Date.now() - started < 5000, `${what}: closed after ${Date.now() - started} ms`);
      }
      await assertServesNormally('connections the parser refused');
    });

    test('what uWS closes unanswered, node:http answers: an unknown method, HTTP/1.0, 49 header fields, a request pipelined behind a write', async () => {
      const close = 'Connection: close\r\n';
      const fields = Array.from({ length: 49 }, (_, i) => `X-Field-${i}: v\r\n`).join('');
      const unknown = await rawRequest(port, `PROPFIND ${base} HTTP/1.1\r\nHost: x\r\n${close}\r\n`);
      assert.equal(unknown.status, 405);
      assert.equal(JSON.parse(unknown.body).code, 'method_not_allowed');
      assert.equal((await rawRequest(port, 'GET /health HTTP/1.0\r\n\r\n')).status, 200);
      assert.equal((await rawRequest(port, `GET /health HTTP/1.1\r\n${fields}${close}\r\n`)).status, 200);
      const absolute = await rawRequest(port, `GET http://x/health HTTP/1.1\r\nHost: x\r\n${close}\r\n`);
      assert.equal(absolute.status, 400);
      assert.match(JSON.parse(absolute.body).details.url, /not a path/);

      const write = JSON.stringify({ surveyId, finished: false, data: { pipelined: true } });
      const received = await exchange(
        port,
        `${head(write.length)}${write}GET /health HTTP/1.1\r\nHost: x\r\n${close}\r\n`,
        'wait',
      );
      const [written, health] = readAnswers(received, [false, false]);
      assert.equal(written?.status, 200);
      assert.equal(health?.status, 200);
      await waitFor(() => storedResponse(app.chorus.orm, JSON.parse(written?.body ?? '').data.id), {
        what: 'the pipelined write',
      });
    });

    test('a head that never ends, and a body that stops coming, are closed unanswered after 10 s', async () => {
      const started = Date.now();
      const replies = await Promise.all([
        exchange(port, 'GET /health HTTP/1.1\r\nHost: x\r\n', 'wait', 30_000),
        exchange(port, head(100) + cutOffBody(4), 'wait', 30_000),
      ]);
      assert.deepEqual(replies, ['', '']);
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 9_000 && elapsed < 25_000, `closed after ${elapsed} ms`);
      assert.equal(await cutOffRows(), 0);
    });
  }
}

/**
 * Writes `data` on a new connection and resolves with everything the server sent until the
 * connection closed. `then` says what the client does after writing: `destroy` drops the
 * connection at once, `end` closes its side cleanly, `wait` waits for the server to close,
 * `until-answered` closes once a whole answer (not a 100 Continue) has arrived.
 */
function exchange(
  port: number,
  data: string,
  then: 'destroy' | 'end' | 'wait' | 'until-answered',
  deadlineMs = SOCKET_DEADLINE_MS,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (then === 'until-answered' && isWholeAnswer(received)) socket.destroy();
    });
    socket.setTimeout(deadlineMs, () =>
      socket.destroy(new Error(`the connection was still open after ${deadlineMs} ms: ${received}`)),
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

const withoutContinue = (received: string) => received.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');

/** Whether `received` holds a whole final answer (after any 100 Continue). */
function isWholeAnswer(received: string): boolean {
  try {
    return readAnswers(withoutContinue(received), [false]).length === 1;
  } catch {
    return false;
  }
}

/**
 * Splits what one connection received into its answers, in order. `heads[i]` says whether the
 * i-th answer is to a HEAD (no body, whatever its Content-Length says). Bodies are read by
 * Content-Length or chunked encoding; an incomplete answer throws.
 */
function readAnswers(received: string, heads: boolean[]): RawReply[] {
  const answers: RawReply[] = [];
  let rest = received;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`an incomplete answer: ${rest.slice(0, 200)}`);
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
      }),
    );
    rest = rest.slice(end + 4);
    let body = '';
    if (heads[answers.length]) {
      // no body
    } else if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const lineEnd = rest.indexOf('\r\n');
        if (lineEnd < 0) throw new Error('an incomplete chunked body');
        const size = parseInt(rest.slice(0, lineEnd), 16);
        if (rest.length < lineEnd + 2 + size + 2) throw new Error('an incomplete chunk');
        body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
        rest = rest.slice(lineEnd + 2 + size + 2);
        if (size === 0) break;
      }
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (rest.length < length) throw new Error('an incomplete body');
      body = rest.slice(0, length);
      rest = rest.slice(length);
    }
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body });
  }
  return answers;
}

/**
 * Sends `start`, then every chunk, then `end`, while reading;
 * resolves with what was received once a whole answer has arrived (or the connection closed).
 */
function uploadAndRead(port: number, start: string, chunks: Buffer[], end: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const finish = () => {
      socket.destroy();
      resolve(received);
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (isWholeAnswer(received)) finish();
    });
    socket.setTimeout(SOCKET_DEADLINE_MS, () =>
      socket.destroy(new Error(`no whole answer after ${SOCKET_DEADLINE_MS} ms: ${received}`)),
    );
    socket.once('error', (error) => (received ? resolve(received) : reject(error)));
    socket.once('close', () => resolve(received));
    // The head first, then at once the whole body, queued as a client sending as fast as it can
    // does: the server decides on the head alone while most of the body is still on its way.
    socket.write(start);
    setTimeout(() => {
      if (socket.destroyed) return;
      for (const chunk of chunks) socket.write(chunk);
      socket.write(end);
    }, 0);
  });
}

/**
 * Sends `start` and `body` without reading (the socket is paused), then reads everything the
 * server sent until it closed the connection: a client that reads its answer only once it has
 * sent the whole request.
 */
function sendAllThenRead(port: number, start: string, body: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.setTimeout(SOCKET_DEADLINE_MS, () => socket.destroy());
    // An error (a reset) ends the exchange with what was read until then.
    socket.on('error', () => undefined);
    socket.once('close', () => resolve(received));
    socket.write(start);
    socket.write(body, () => socket.resume());
  });
}
