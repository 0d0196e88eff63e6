import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRequire } from 'node:module';
import { encodeRecord, type RecordFields } from './record-encoder.ts';

const require = createRequire(import.meta.url);

describe('record encoder', () => {
  type Record = RecordFields & { offsetDelta?: number; timestampDelta?: number };
  const kafkajs = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (fields: Record) => {
    buffer: Buffer;
  };
  const sameAsKafkajs = (fields: Record) =>
    assert.deepEqual(
      encodeRecord(fields, fields.offsetDelta ?? 0, fields.timestampDelta ?? 0),
      kafkajs(fields).buffer,
      JSON.stringify(fields).slice(0, 200),
    );

  it('writes the bytes kafkajs writes, for keys, values and headers of every length class', () => {
    // Lengths around each varint boundary (63/64, 8191/8192 after zigzag) and past kafkajs' 512 bytes.
    const lengths = [0, 1, 63, 64, 65, 511, 512, 513, 8191, 8192, 8193, 70_000];
    for (const length of lengths) {
      const ascii = 'x'.repeat(length);
      const multibyte = 'é€😀'.repeat(Math.ceil(length / 3)).slice(0, length);
      for (const value of [ascii, multibyte, Buffer.from(ascii), null, undefined]) {
        sameAsKafkajs({ key: `rsp_${length}`, value });
        sameAsKafkajs({ key: value, value: 'v', offsetDelta: length, timestampDelta: length });
        sameAsKafkajs({ key: 'k', value: 'v', headers: { [ascii.slice(0, 300) || 'h']: multibyte } });
      }
    }
  });

  it('writes what kafkajs writes for lone surrogates, negative and large deltas and many headers', () => {
    let s = 7;
    const random = (n: number) => ((s = (s * 1103515245 + 12345) % 2 ** 31), s % n);
    const pieces = ['a', 'é', '€', '😀', '\ud800', '\udfff', '\u0000', '"', '\n'];
    const text = () => Array.from({ length: random(300) }, () => pieces[random(pieces.length)]).join('');
    for (let i = 0; i < 2_000; i++) {
      const headers = Object.fromEntries(
        Array.from({ length: random(4) }, () => [text() || 'h', random(2) ? text() : Buffer.from(text())]),
      );
      sameAsKafkajs({
        key: random(5) === 0 ? null : text(),
        value: random(5) === 0 ? Buffer.from(text()) : text(),
        headers,
        offsetDelta: random(100_000),
        timestampDelta: (random(2) ? -1 : 1) * random(2 ** 31 - 1) * (random(3) === 0 ? 2 ** 20 : 1),
      });
    }
  });

  it('leaves to kafkajs what Chorus never writes: numbers as values, several values of a header', () => {
    assert.equal(encodeRecord({ key: 'k', value: 42 }, 0, 0), undefined);
    assert.equal(encodeRecord({ key: 'k', value: 'v', headers: { h: ['a', 'b'] } }, 0, 0), undefined);
    assert.equal(encodeRecord({ key: 'k', value: 'v' }, 0, 2 ** 53), undefined);
    assert.equal(encodeRecord({ key: 'k', value: 'v' }, 0, 1.5), undefined);
  });
});
