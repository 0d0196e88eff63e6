import { test } from 'node:test';
import assert from 'node:assert/strict';
import { webhookBody } from './payload.ts';

test('the body is {webhookId, event, data} with the response as data, the same bytes each time', () => {
  const response = { id: 'rsp_1', surveyId: 'srv_1', finished: true, data: { q1: 'Love it' } };
  const body = webhookBody({ webhookId: 'whk_1', event: 'responseFinished', response });
  assert.deepEqual(JSON.parse(body), { webhookId: 'whk_1', event: 'responseFinished', data: response });
  assert.equal(webhookBody({ webhookId: 'whk_1', event: 'responseFinished', response }), body);
});
