import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChorusError } from '../errors.ts';
import type { ContactIdentified } from '../events/contacts.ts';
import { csvRecords, type CsvRecord } from './csv-records.ts';
import { importContacts, ImportStopped } from './contacts-import.ts';

async function records(chunks: string[]): Promise<CsvRecord[]> {
  const all: CsvRecord[] = [];
  for await (const record of csvRecords(chunks.map((c) => Buffer.from(c)))) all.push(record);
  return all;
}

test('CSV records keep their first line, whatever the chunks: quotes, doubled quotes, CRLF, a BOM, blank lines', async () => {
  const text = '\uFEFFa,b\r\n"x, y","say ""hi"""\r\n\r\n"two\nlines",é\nlast,"one"';
  const expected = [
    { line: 1, fields: ['a', 'b'] },
    { line: 2, fields: ['x, y', 'say "hi"'] },
    { line: 4, fields: ['two\nlines', 'é'] },
    { line: 6, fields: ['last', 'one'] },
  ];
  assert.deepEqual(await records([text]), expected);
  // Every split point, bytes included (é is two): the same records.
  const bytes = Buffer.from(text);
  for (let at = 1; at < bytes.length; at++) {
    const split: CsvRecord[] = [];
    for await (const r of csvRecords([bytes.subarray(0, at), bytes.subarray(at)])) split.push(r);
    assert.deepEqual(split, expected, `split at byte ${at}`);
  }
});

test('a quote never closed is one bad record, reported with the line it starts on', async () => {
  assert.deepEqual(await records(['userId\nada\n"bob\n\n']), [
    { line: 1, fields: ['userId'] },
    { line: 2, fields: ['ada'] },
    { line: 3, problem: 'a quoted field is never closed' },
  ]);
});

const file = (lines: string[]) => csvRecords([Buffer.from(lines.join('\n'))]);

test('each good line is one identify of its user, empty cells send nothing, bad lines are named', async () => {
  const sent: ContactIdentified[] = [];
  const report = await importContacts(
    file([
      'userId,email,plan',
      'ada,ada@example.com,',
      'bob,nope,pro',
      'carol,,pro,extra',
      'dave,,2024-01-01',
    ]),
    { environmentId: 'env_1', publish: async (c) => void sent.push(c) },
  );
  assert.deepEqual(
    sent.map((c) => [c.userId, c.attributes, c.attributeTypes]),
    [
      ['ada', { email: 'ada@example.com' }, undefined],
      ['dave', { plan: '2024-01-01' }, { plan: 'date' }],
    ],
  );
  assert.equal(report.imported, 2);
  assert.deepEqual(report.refused, [
    { line: 3, problem: 'attributes.email must be a valid email' },
    { line: 4, problem: '4 fields where the header has 3' },
  ]);
});

test('a line too large for the log is refused alone; the log failing stops the import with what was taken', async () => {
  const tooLarge = await importContacts(file(['userId,note', 'ada,short', 'bob,long']), {
    environmentId: 'env_1',
    publish: async (c) => {
      if (c.userId === 'bob') throw new ChorusError('payload_too_large', 'too large');
    },
  });
  assert.deepEqual(tooLarge, { imported: 1, refused: [{ line: 3, problem: 'too large for the event log' }] });

  const lines = ['userId', ...Array.from({ length: 10 }, (_, i) => `u${i}`)];
  let calls = 0;
  await assert.rejects(
    importContacts(file(lines), {
      environmentId: 'env_1',
      inFlight: 3,
      publish: async () => {
        if (++calls > 4) throw new ChorusError('unavailable', 'The event log is unavailable');
      },
    }),
    (error: unknown) => error instanceof ImportStopped && error.report.imported === 4, // u0–u3 acknowledged
  );
});
