import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, logFormat } from './logger.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, stream };
}

test('log lines are JSON with level, time, pid, hostname and msg, and answers are censored', () => {
  const { lines, stream } = capture();
  createLogger('info', stream).info({ responseId: 'rsp_1', data: { q1: 'my answer' } }, 'stored');
  const [line] = lines;
  assert.deepEqual(Object.keys(line!).sort(), [
    'data',
    'hostname',
    'level',
    'msg',
    'pid',
    'responseId',
    'time',
  ]);
  assert.equal(line!.data, '[redacted]');
  assert.equal(line!.level, 30);
});

test('a logged error that carries a failed statement loses its values and the row detail', () => {
  const { lines, stream } = capture();
  const err = Object.assign(
    new Error(`update "responses" set "data" = '{"q1":"my answer"}' where "id" = 'rsp_1' - boom`),
    {
      detail: 'Failing row contains (rsp_1, my answer).',
    },
  );
  createLogger('info', stream).error({ err }, 'batch failed');
  const logged = lines[0]!.err as { message: string; stack: string; detail?: string };
  assert.equal(logged.message, `update "responses" set "data" = ? where "id" = ? - boom`);
  assert.equal(logged.detail, undefined);
  assert.ok(!JSON.stringify(lines).includes('my answer'));
});

test('below the configured level nothing is written', () => {
  const { lines, stream } = capture();
  const logger = createLogger('warn', stream);
  logger.info('not written');
  logger.debug('not written either');
  logger.warn('written');
  assert.deepEqual(
    lines.map((l) => l.msg),
    ['written'],
  );
});

/** A stream that keeps what is written as text, and says whether it is a terminal. */
function text(isTTY: boolean) {
  const written: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        written.push(chunk.toString());
        done();
      },
    }),
    { isTTY },
  );
  return { written, stream };
}

test('logs are readable on a terminal and JSON elsewhere, unless LOG_FORMAT chooses', () => {
  const terminal = text(true).stream;
  const pipe = text(false).stream;
  assert.equal(logFormat(undefined, terminal), 'pretty');
  assert.equal(logFormat(undefined, pipe), 'json');
  assert.equal(logFormat('json', terminal), 'json');
  assert.equal(logFormat('pretty', pipe), 'pretty');
});

test('a pretty line reads as time, level, component and message, and still censors answers', () => {
  const { written, stream } = text(false);
  createLogger('info', stream, { format: 'pretty' })
    .child({ component: 'processor' })
    .info({ responseId: 'rsp_1', data: { q1: 'my answer' } }, 'stored');
  const [line] = written;
  assert.match(
    line!,
    /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: processor: stored \{.*"responseId":"rsp_1".*\}\n$/,
  );
  assert.ok(!line!.includes('my answer'));
  assert.ok(!line!.includes('hostname') && !line!.includes('"pid"'));
  assert.ok(!line!.includes('\u001b['), 'no colour codes when the destination is not a terminal');
});

test('a JSON logger on a terminal still writes JSON when LOG_FORMAT=json', () => {
  const { written, stream } = text(true);
  createLogger('info', stream, { format: 'json' }).info('started');
  assert.equal((JSON.parse(written[0]!) as { msg: string }).msg, 'started');
});
