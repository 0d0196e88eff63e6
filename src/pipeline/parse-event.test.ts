import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DisplayCreatedCheck, type DisplayCreated } from '../events/displays.ts';
import type { ConsumedMessage } from '../kafka/consumer.ts';
import { parseEvent } from './parse-event.ts';
import { displayCreated } from '../../test/helpers/events.ts';

const parse = parseEvent(DisplayCreatedCheck, (d: DisplayCreated) => d.displayId);

/** A display as JSON has it; `extra` may add fields the contract does not know. */
const display = (extra: Record<string, unknown> = {}) => ({
  ...displayCreated({ displayId: 'dsp_1' }),
  ...extra,
});

const message = (value: string): ConsumedMessage => ({
  topic: 'displays',
  partition: 0,
  offset: '0',
  key: 'dsp_1',
  value: Buffer.from(value),
  headers: {},
  trace: {},
  replayed: false,
});

test('a well-formed event with its key parses', () => {
  const parsed = parse(message(JSON.stringify(display())));
  assert.equal(parsed.ok, true);
});

test('an event nested 100,000 levels deep is dead-lettered as unstorable, without overflowing the stack', () => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const text = JSON.stringify(display({ userId: 'PLACEHOLDER' })).replace('"PLACEHOLDER"', deep);
  const parsed = parse(message(text));
  assert.deepEqual(parsed.ok ? undefined : parsed.reason, 'unstorable_event');
});

test('an event holding a NUL, a lone surrogate or an infinite number is dead-lettered as unstorable', () => {
  for (const raw of ['"a\\u0000b"', '"\\ud800"', '1e400', `1${'0'.repeat(250)}e60`]) {
    const text = JSON.stringify(display({ userId: 'PLACEHOLDER' })).replace('"PLACEHOLDER"', raw);
    const parsed = parse(message(text));
    assert.equal(parsed.ok ? undefined : parsed.reason, 'unstorable_event', raw);
  }
});

test('an event under another key than its own is dead-lettered', () => {
  const parsed = parse({ ...message(JSON.stringify(display())), key: 'dsp_2' });
  assert.equal(parsed.ok ? undefined : parsed.reason, 'key_mismatch');
});
