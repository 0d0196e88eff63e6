import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kafkaLogLevel } from './kafka.ts'; // first: it adapts kafkajs before kafkajs loads
import { logLevel } from 'kafkajs';

test("a fresh broker's start-up answers, retried by kafkajs, are debug lines, not warnings", () => {
  for (const error of [
    'The group coordinator is not available',
    "The coordinator is loading and hence can't process requests",
    'This is not the correct coordinator for this group',
    'The group is rebalancing, so a rejoin is needed',
    'There is no leader for this topic-partition as we are in the middle of a leadership election',
    'This server does not host this topic-partition',
  ])
    assert.equal(
      kafkaLogLevel(logLevel.ERROR, 'Response GroupCoordinator(key: 10, version: 2)', error),
      'debug',
    );
});

test('other failed requests stay visible, and an exhausted retry is an error', () => {
  assert.equal(
    kafkaLogLevel(
      logLevel.ERROR,
      'Response Produce(key: 0, version: 7)',
      'The request included a message larger than the max message size the server will accept',
    ),
    'warn',
  );
  assert.equal(kafkaLogLevel(logLevel.ERROR, 'Connection error: connect ECONNREFUSED'), 'debug');
  assert.equal(kafkaLogLevel(logLevel.ERROR, 'Restarting the consumer: retries exceeded'), 'error');
  assert.equal(kafkaLogLevel(logLevel.WARN, 'Some other warning'), 'warn');
});
