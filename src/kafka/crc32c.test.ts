import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
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

  it('is the checksum kafkajs writes with once Chorus is loaded', () => {
    // In a process of its own: Chorus' roles load kafkajs only after this module replaced it.
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const script = `
      await import('./src/roles/start.ts');
      const { createRequire } = await import('node:module');
      const require = createRequire(process.cwd() + '/');
      const used = require('kafkajs/src/protocol/recordBatch/crc32C/index.js');
      process.stdout.write(used.name);`;
    const name = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
    });
    assert.equal(name, 'crc32c');
  });
});
