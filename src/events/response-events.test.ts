import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { responseFactJson, type ResponseFact, type ResponseSnapshot } from './response-events.ts';

const snapshot = (id: string, data: Record<string, unknown>): ResponseSnapshot => ({
  id,
  environmentId: 'env_1',
  surveyId: 'srv_1',
  finished: true,
  data,
  ttc: { q1: 1.5 },
  variables: {},
  meta: { source: 'app', userAgent: { browser: 'Firefox' } },
  language: null,
  endingId: null,
  displayId: null,
  singleUseId: null,
  contactId: null,
  createdAt: '2026-12-07T12:00:00.000Z',
  updatedAt: '2026-12-07T12:00:00.000Z',
});

const fact = (
  type: 'response.created' | 'response.updated' | 'response.finished',
  response: ResponseSnapshot,
) =>
  ({
    type,
    version: 1,
    eventId: `${response.id}:${type}`,
    occurredAt: '2026-12-07T12:00:00.000Z',
    appliedAt: '2026-12-07T12:00:01.000Z',
    environmentId: response.environmentId,
    responseId: response.id,
    surveyId: response.surveyId,
    response,
  }) satisfies ResponseFact;

describe('the JSON of a response fact', () => {
  it("is JSON.stringify's, for facts that share a snapshot and for the next one's", () => {
    const first = snapshot('rsp_1', { q1: 'é "quoted" \u2028', q2: [1, 2] });
    const second = snapshot('rsp_2', { q1: 'other' });
    const facts: ResponseFact[] = [
      fact('response.created', first),
      fact('response.finished', first),
      fact('response.updated', second),
      {
        type: 'response.deleted',
        version: 1,
        eventId: 'rsp_2:deleted',
        occurredAt: 'x',
        appliedAt: 'y',
        environmentId: 'env_1',
        responseId: 'rsp_2',
        surveyId: 'srv_1',
      },
      fact('response.finished', first),
    ];
    for (const f of facts) assert.equal(responseFactJson(f), JSON.stringify(f));
  });
});
