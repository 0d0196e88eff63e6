import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseTopic, KNOWN_TOPICS } from './topics.ts';

const existing = ['acme.response-events', 'acme.responses', 'staging.response-events', 'other-team.clicks'];

test('a short name gets the configured prefix', () => {
  assert.deepEqual(chooseTopic('response-events', 'acme.', existing), { topic: 'acme.response-events' });
  assert.deepEqual(chooseTopic('responses', 'acme.', existing), { topic: 'acme.responses' });
});

test('a full name of a Chorus topic is read as it is, whatever its prefix', () => {
  assert.deepEqual(chooseTopic('staging.response-events', 'acme.', existing), {
    topic: 'staging.response-events',
  });
});

test('a known topic that the cluster does not have yet is named in full', () => {
  const choice = chooseTopic('display-events', 'acme.', existing);
  assert.match('problem' in choice ? choice.problem : '', /^topic "acme\.display-events" does not exist yet/);
});

test('an unknown name, or a topic that is not Chorus', () => {
  for (const name of ['responsez', 'other-team.clicks', 'staging.displays']) {
    const choice = chooseTopic(name, 'acme.', existing);
    assert.ok('problem' in choice, name);
    assert.match(choice.problem, new RegExp(`^unknown topic "${name}": known topics are response-events, `));
    assert.ok(!choice.problem.includes('\n'), 'one line');
  }
});

test('the public topics come first among the known ones, each once', () => {
  assert.deepEqual(KNOWN_TOPICS.slice(0, 4), [
    'response-events',
    'display-events',
    'contact-events',
    'survey-events',
  ]);
  assert.equal(new Set(KNOWN_TOPICS).size, KNOWN_TOPICS.length);
});
