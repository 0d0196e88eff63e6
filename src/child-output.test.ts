import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { forEachReadableLine, readableLine } from './child-output.ts';

test("Maven's bare colour resets are no line at all, and a coloured line keeps only its text", () => {
  assert.equal(readableLine('\u001b[0m'), undefined);
  assert.equal(readableLine('\u001b[0m\u001b[0m  \u001b[0m'), undefined);
  assert.equal(readableLine(''), undefined);
  assert.equal(
    readableLine('\u001b[1;34mINFO\u001b[m Downloaded from central: kafka_2.13-3.9.1.jar'),
    'INFO Downloaded from central: kafka_2.13-3.9.1.jar',
  );
  assert.equal(readableLine('\u001b[0m\u001b[0mkafka: ready'), 'kafka: ready');
});

test('a progress bar redrawn with carriage returns shows its last state, control characters go', () => {
  assert.equal(readableLine('10 MB\r20 MB\r30 MB\r'), '30 MB');
  assert.equal(readableLine('done\u0007 \t'), 'done');
});

test('lines split across chunks arrive whole, and empty ones are dropped', async () => {
  const stream = new PassThrough();
  const lines: string[] = [];
  forEachReadableLine(stream, (line) => lines.push(line));
  stream.write('kafka: fetch');
  stream.write('ing jars\n\u001b[0m\n\n');
  stream.end('kafka: ready\r\n');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(lines, ['kafka: fetching jars', 'kafka: ready']);
});
