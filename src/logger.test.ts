import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from './logger.ts';

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
