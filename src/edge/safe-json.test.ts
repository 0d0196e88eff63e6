import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ChorusError } from '../errors.ts';
import { MAX_JSON_DEPTH, mayBeUnstorable, unstorableProblems } from '../store/storable.ts';
import { requireStorableRequest } from './safe-json.ts';

const TEXT = 'must not contain a NUL character or an unpaired surrogate';
const deep = (levels: number): unknown => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`);

describe('values PostgreSQL refuses', () => {
  test('a NUL or a lone surrogate is found in any string value or object key, at any depth, with its path', () => {
    assert.deepEqual(unstorableProblems({ data: { q1: 'a\u0000' } }), { 'data.q1': TEXT });
    assert.deepEqual(unstorableProblems(JSON.parse('{"a":[1,{"b":"\\ud800"}]}')), { 'a.1.b': TEXT });
    assert.deepEqual(unstorableProblems(JSON.parse('{"a":{"\\udc00x":1}}')), { a: `keys ${TEXT}` });
    assert.deepEqual(unstorableProblems(JSON.parse('{"\\u0000":1}')), { body: `keys ${TEXT}` });
    assert.deepEqual(
      unstorableProblems(JSON.parse('{"__proto__":"\\u0000"}')),
      JSON.parse(`{"__proto__":"${TEXT}"}`),
    );
    assert.deepEqual(unstorableProblems('\ud83d'), { body: TEXT });
  });

  test('valid surrogate pairs, other control characters and non-string values pass', () => {
    assert.deepEqual(unstorableProblems({ a: '😀 ünï\t\u0001', b: [1, true, null, { '😀': 'x' }] }), {});
    assert.deepEqual(unstorableProblems(null), {});
    assert.deepEqual(unstorableProblems(42), {});
  });

  test('JSON nested deeper than the limit is refused without overflowing the stack, however deep', () => {
    assert.deepEqual(unstorableProblems(deep(MAX_JSON_DEPTH)), {});
    assert.deepEqual(unstorableProblems(deep(MAX_JSON_DEPTH + 1)), {
      body: `must not be nested deeper than ${MAX_JSON_DEPTH} levels`,
    });
    assert.deepEqual(Object.keys(unstorableProblems(deep(100_000))), ['body']);
  });

  test('a NUL in a query name or value or a path segment is refused with 400 naming where', () => {
    const problems = (path: string, query: string) => {
      try {
        requireStorableRequest({ path, query: new URLSearchParams(query) });
        return {};
      } catch (error) {
        assert.ok(error instanceof ChorusError && error.kind === 'invalid_input');
        return error.details;
      }
    };
    assert.deepEqual(problems('/api/v1/x', 'a=1&b=%F0%9F%98%80'), {});
    assert.deepEqual(problems('/api/v1/x', 'a=%00'), { 'query.a': TEXT });
    assert.deepEqual(problems('/api/v1/x', '%00=1'), { query: `keys ${TEXT}` });
    assert.deepEqual(problems('/api/v1/a%00b', ''), { path: TEXT });
    assert.deepEqual(
      problems('/api/v1/%ED%A0%80', ''),
      {},
      'an encoded surrogate is not valid UTF-8: left alone',
    );
  });
});

test('a number JSON.parse turned into Infinity (1e400) is refused: it would be stored as null', () => {
  const parsed: unknown = JSON.parse('{"data":{"hidden":1e400,"ok":1.5e308},"ttc":{"q":-1e999}}');
  assert.deepEqual(unstorableProblems(parsed), {
    'data.hidden': 'must be a finite number (at most about 1.8e308)',
    'ttc.q': 'must be a finite number (at most about 1.8e308)',
  });
});

test('every JSON text whose value is unstorable is one the text check sends to the walk; plain bodies are not', () => {
  const unstorable = [
    '{"a":"x\\u0000y"}',
    '{"a\\u0000":1}',
    '{"a":"\\ud800"}',
    '{"a":"\\uDFFF x"}',
    '{"a":1e400}',
    '{"a":-1E+999}',
    `{"a":${'9'.repeat(400)}}`,
    `{"a":1${'0'.repeat(250)}e60}`,
    `{"a":${'9'.repeat(210)}e99}`,
    '9'.repeat(400),
    `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`,
    `{"a":${'{"b":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH)}}`,
  ];
  for (const text of unstorable) {
    assert.notDeepEqual(unstorableProblems(JSON.parse(text)), {}, text.slice(0, 40));
    assert.equal(mayBeUnstorable(text), true, text.slice(0, 40));
  }
  const storable = [
    '{"surveyId":"srv_1","finished":true,"data":{"q1":"Great 😀 product","q2":4},"ttc":{"q1":3.2},"meta":{"source":"app"}}',
    '{"data":{"n":1.5e10,"list":[1,2,[3]]}}',
    // Ids and words with an `e` and three digits in them.
    '{"surveyId":"srv_01m8e123kx9v","displayId":"dsp_e1234","data":{"q":"1e400x"}}',
    // Runs of digits one short of the bound.
    `[${`${'9'.repeat(199)},`.repeat(3)}1]`,
  ];
  for (const text of storable) assert.equal(mayBeUnstorable(text), false, text);
  // Conservative, never wrong: a pair of escapes is storable but still walked.
  assert.equal(mayBeUnstorable('{"a":"\\ud83d\\ude00"}'), true);
});
