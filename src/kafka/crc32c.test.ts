import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { crc32c } from './crc32c.ts';

const require = createRequire(import.meta.url);

describe('crc32c', () => {
  it("gives kafkajs' own checksum for buffers of every length", () => {
    const bytewise = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (b: Buffer) => number;
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283); // the check value of CRC-32C
    for (const length of [0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 65_536, 300_001]) {
      const buffer = randomBytes(length);
      assert.equal(crc32c(buffer), bytewise(buffer) >>> 0, `${length} bytes`);
    }
    assert.equal(crc32c(Buffer.alloc(100, 0xff)), bytewise(Buffer.alloc(100, 0xff)) >>> 0);
  });
});
